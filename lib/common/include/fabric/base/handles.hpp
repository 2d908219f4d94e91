#pragma once
/// Move-only owners for every rdma_cm and verbs handle.
///
/// Destroy order follows the man pages: QPs and AHs before their PD, QPs
/// before the rdma_cm_id they sit on, every id before its event channel,
/// CQs before their completion channel. Declare members in the reverse of
/// that order (members are destroyed bottom-up).

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <memory>
#include <utility>

namespace fabric {

/// Calls a C release function; the deleter of every handle below.
template <auto Fn>
struct release {
  template <class T>
  void operator()(T* p) const noexcept {
    Fn(p);
  }
};

using event_channel = std::unique_ptr<rdma_event_channel, release<&rdma_destroy_event_channel>>;
using cm_id = std::unique_ptr<rdma_cm_id, release<&rdma_destroy_id>>;
using addrinfo_ptr = std::unique_ptr<rdma_addrinfo, release<&rdma_freeaddrinfo>>;
using protection_domain = std::unique_ptr<ibv_pd, release<&ibv_dealloc_pd>>;
using comp_channel = std::unique_ptr<ibv_comp_channel, release<&ibv_destroy_comp_channel>>;
using completion_queue = std::unique_ptr<ibv_cq, release<&ibv_destroy_cq>>;
using memory_region = std::unique_ptr<ibv_mr, release<&ibv_dereg_mr>>;
using address_handle = std::unique_ptr<ibv_ah, release<&ibv_destroy_ah>>;
using verbs_qp = std::unique_ptr<ibv_qp, release<&ibv_destroy_qp>>;

/// A QP created on an rdma_cm_id with rdma_create_qp; destroyed with rdma_destroy_qp.
class cm_qp {
public:
  cm_qp() = default;
  explicit cm_qp(rdma_cm_id* id) noexcept : id_(id) {}
  cm_qp(cm_qp&& o) noexcept : id_(std::exchange(o.id_, nullptr)) {}
  cm_qp& operator=(cm_qp&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, nullptr);
    }
    return *this;
  }
  ~cm_qp() { reset(); }

  [[nodiscard]] ibv_qp* get() const noexcept { return id_ ? id_->qp : nullptr; }
  explicit operator bool() const noexcept { return get() != nullptr; }
  void reset() noexcept {
    if (id_ && id_->qp) rdma_destroy_qp(id_);
    id_ = nullptr;
  }

private:
  rdma_cm_id* id_ = nullptr;
};

/// Membership in a multicast group joined on an id; leaves on destruction.
class multicast_membership {
public:
  multicast_membership() = default;
  multicast_membership(rdma_cm_id* id, const sockaddr* addr) noexcept;
  multicast_membership(multicast_membership&& o) noexcept;
  multicast_membership& operator=(multicast_membership&& o) noexcept;
  ~multicast_membership() { reset(); }

  explicit operator bool() const noexcept { return id_ != nullptr; }
  void reset() noexcept;

private:
  rdma_cm_id* id_ = nullptr;
  sockaddr_storage addr_{};
};

}  // namespace fabric
