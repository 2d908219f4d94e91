#include "fabric/handles.hpp"

#include <infiniband/ib.h>

#include <cstring>
#include <utility>

namespace fabric {

namespace {
socklen_t sockaddr_size(const sockaddr* sa) noexcept {
  switch (sa->sa_family) {
    case AF_INET: return sizeof(sockaddr_in);
    case AF_INET6: return sizeof(sockaddr_in6);
    case AF_IB: return sizeof(sockaddr_ib);
    default: return sizeof(sockaddr_storage);
  }
}
}  // namespace

multicast_membership::multicast_membership(rdma_cm_id* id, const sockaddr* addr) noexcept : id_(id) {
  std::memcpy(&addr_, addr, sockaddr_size(addr));
}

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
