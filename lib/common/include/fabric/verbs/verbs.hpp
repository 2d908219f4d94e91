#pragma once
/// Verbs resources: completion queues with bounded waits, registered buffers.

#include "fabric/base/error.hpp"
#include "fabric/base/handles.hpp"
#include "fabric/verbs/remote_buffer.hpp"
#include "fabric/base/wait.hpp"

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace fabric {

/// A CQ with its completion channel. wait() sleeps on the channel, or spins
/// on the CQ when busy polling; both are bounded by a deadline.
class event_cq {
public:
  event_cq(ibv_context* verbs, int depth, bool busy_poll);
  event_cq(const event_cq&) = delete;
  event_cq& operator=(const event_cq&) = delete;
  ~event_cq();

  [[nodiscard]] ibv_cq* get() const noexcept { return cq_.get(); }

  /// Polls up to out.size() completions without waiting.
  std::size_t poll(std::span<ibv_wc> out);

  /// Returns at least one completion, or 0 when the deadline passed first.
  std::size_t wait(std::span<ibv_wc> out, const deadline& until);

  /// Like wait(), but also returns (0) as soon as `watch_fd` is readable,
  /// so that a caller can handle CM events while it waits for completions.
  std::size_t wait_or(std::span<ibv_wc> out, int watch_fd, const deadline& until);
  /// The same, bounded by a deadline that starts only once the first polls
  /// found nothing: a completion that is there at once, or soon, costs no
  /// clock read (a ping's waits, each shorter than the polls before it).
  std::size_t wait_or(std::span<ibv_wc> out, int watch_fd, lazy_deadline& until);

private:
  // Polls for a short while; 0 when nothing came.
  std::size_t spin(std::span<ibv_wc> out);
  void rearm();
  comp_channel channel_;
  completion_queue cq_;
  bool busy_poll_;
  unsigned unacked_ = 0;
};

/// CQs that share one completion channel, for a tool that drives many
/// connections from one thread: one readable descriptor says that any of
/// them has work, so one bounded wait covers them all. Every CQ stays armed.
class cq_group {
public:
  explicit cq_group(ibv_context* verbs);
  cq_group(const cq_group&) = delete;
  cq_group& operator=(const cq_group&) = delete;
  ~cq_group();

  /// Creates an armed CQ of at least `depth` entries, owned by the group.
  ibv_cq* add(int depth);

  /// Readable when a CQ of the group has new completions.
  [[nodiscard]] int fd() const noexcept { return channel_->fd; }

  /// Takes the pending channel events and re-arms their CQs; call when
  /// fd() is readable, then poll the CQs.
  void consume_events();

private:
  struct slot {
    completion_queue cq;
    unsigned unacked = 0;
  };
  ibv_context* verbs_;
  comp_channel channel_;                      // destroyed after every CQ
  std::vector<std::unique_ptr<slot>> cqs_;
};

/// "success", "retry counter exceeded", ...
std::string_view wc_status_name(ibv_wc_status status) noexcept;

/// An error for a failed work completion: "what: remote access error (wr_id 3)".
error wc_error(const ibv_wc& wc, std::string_view what);

/// A zeroed heap buffer registered with a PD.
class registered_buffer {
public:
  registered_buffer() = default;
  registered_buffer(ibv_pd* pd, std::size_t size, int access);

  [[nodiscard]] std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {data_.get(), size_}; }
  [[nodiscard]] ibv_mr* mr() const noexcept { return mr_.get(); }
  [[nodiscard]] std::uint32_t lkey() const noexcept { return mr_->lkey; }
  [[nodiscard]] std::uint32_t rkey() const noexcept { return mr_->rkey; }
  [[nodiscard]] std::uint64_t addr() const noexcept { return reinterpret_cast<std::uintptr_t>(data_.get()); }
  /// A scatter/gather entry covering the first `length` bytes.
  [[nodiscard]] ibv_sge sge(std::uint32_t length) const noexcept { return {addr(), length, lkey()}; }

private:
  std::unique_ptr<std::byte[]> data_;  // destroyed after the MR that covers it
  std::size_t size_ = 0;
  memory_region mr_;
};

/// What a peer needs to READ from or WRITE to `buf`, all of it.
[[nodiscard]] inline remote_buffer advertise(const registered_buffer& buf) noexcept {
  return {buf.addr(), buf.rkey(), static_cast<std::uint32_t>(buf.size())};
}

/// The work request of an RDMA READ or WRITE (`op`) between the buffer of
/// `sge` and the peer's `remote`, to post alone or chained to others;
/// signaled unless `signaled` is false. `sge` must outlive the post.
[[nodiscard]] ibv_send_wr rdma_wr(ibv_wr_opcode op, ibv_sge& sge, const remote_buffer& remote, std::uint64_t wr_id = 0,
                                  bool signaled = true) noexcept;

/// Posts an RDMA READ or WRITE (`op`) between the first `length` bytes of
/// `local` and the peer's `remote`; signaled unless `signaled` is false.
void post_rdma(ibv_qp* qp, ibv_wr_opcode op, const registered_buffer& local, std::uint32_t length,
               const remote_buffer& remote, std::uint64_t wr_id = 0, bool signaled = true);

/// Allocates a PD; throws naming the device.
protection_domain alloc_pd(ibv_context* verbs);

/// Post helpers that throw on failure.
void post_send(ibv_qp* qp, ibv_send_wr& wr);
void post_recv(ibv_qp* qp, ibv_recv_wr& wr);

}  // namespace fabric
