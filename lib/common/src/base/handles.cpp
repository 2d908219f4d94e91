#include "fabric/base/handles.hpp"

#include "fabric/base/sockaddr.hpp"

#include <utility>

namespace fabric {

multicast_membership::multicast_membership(rdma_cm_id* id, const sockaddr* addr) noexcept
    : id_(id), addr_(copy_sockaddr(addr)) {}

multicast_membership::multicast_membership(multicast_membership&& o) noexcept
    : id_(std::exchange(o.id_, nullptr)), addr_(o.addr_) {}

multicast_membership& multicast_membership::operator=(multicast_membership&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = std::exchange(o.id_, nullptr);
    addr_ = o.addr_;
  }
  return *this;
}

void multicast_membership::reset() noexcept {
  if (id_) rdma_leave_multicast(id_, reinterpret_cast<sockaddr*>(&addr_));
  id_ = nullptr;
}

}  // namespace fabric
