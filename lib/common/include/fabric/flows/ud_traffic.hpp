#pragma once
/// The datagrams of a UD endpoint, as udaddy and mckey exchange them:
/// sends paced to the send queue, receives reposted, counts, strangers and
/// oversize datagrams set aside, and the payload check of --verify.

#include "fabric/base/idle_deadline.hpp"
#include "fabric/cm/ud.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace fabric {

/// A descriptor watched beside an endpoint's completions, and what is done
/// when it is readable (a UD server answering its CM channel).
struct watched_fd {
  int fd = -1;
  std::function<void()> ready;
};

/// The datagrams of one endpoint: sends paced so that the send queue never
/// overflows, receives reposted until `expected` have been posted (as many
/// as rdma-core's tools post, so a peer's surplus is dropped, not queued),
/// counts, and the payload check of --verify. A datagram longer than the
/// endpoint's size is counted (oversize), whoever sent it, and its slot
/// reposted; it never counts as a message.
class ud_traffic {
public:
  /// Called for each good receive before its slot is reposted (the GRH is
  /// still in the slot then): the completion and the payload.
  using receive_fn = std::function<void(const ibv_wc&, std::span<const std::byte>)>;
  /// Whether a good receive is from the peer (given the completion and the
  /// slot's GRH): a datagram from anyone else is counted as a stranger's,
  /// its slot reposted, and nothing else done with it.
  using accept_fn = std::function<bool(const ibv_wc&, const ibv_grh&)>;

  /// `what` names the endpoint in errors ("connection 2").
  ud_traffic(ud_endpoint& ep, std::uint64_t expected, bool verify, std::string what, receive_fn on_receive = {},
             accept_fn accept = {});

  /// Posts the first receives, up to the queue depth. Before the peer sends.
  void post_receives();

  /// Sends `count` pattern-filled messages to `to`. False when the send
  /// queue made no progress before the deadline.
  bool send(const ud_destination& to, std::uint64_t count, idle_deadline& until);
  /// Waits until every send completed; false on timeout.
  bool finish_sends(idle_deadline& until);
  /// Waits until `expected` messages arrived; false on timeout. While it
  /// waits, `also.ready` is called whenever `also.fd` is readable.
  bool receive_all(idle_deadline& until, const watched_fd& also = {});
  /// Handles the completions that are already there, without waiting
  /// (a queue's worth at most).
  void drain();

  /// What names the endpoint in errors ("connection 2").
  [[nodiscard]] const std::string& what() const noexcept { return what_; }
  [[nodiscard]] std::uint64_t sent() const noexcept { return sent_; }
  [[nodiscard]] std::uint64_t received() const noexcept { return received_; }
  [[nodiscard]] std::uint64_t expected() const noexcept { return expected_; }
  [[nodiscard]] std::uint64_t lost() const noexcept { return received_ < expected_ ? expected_ - received_ : 0; }
  [[nodiscard]] std::uint64_t verify_errors() const noexcept { return verify_errors_; }
  /// Datagrams that accept_fn refused.
  [[nodiscard]] std::uint64_t strangers() const noexcept { return strangers_; }
  /// Datagrams longer than the agreed size, from anyone: dropped.
  [[nodiscard]] std::uint64_t oversize() const noexcept { return oversize_; }

private:
  bool wait_some(idle_deadline& until, const watched_fd& also = {});
  /// Whether `wc` is the peer's progress: a send done, a message received
  /// (not a stranger's or an oversize datagram).
  bool completion(const ibv_wc& wc);

  ud_endpoint& ep_;
  std::uint64_t expected_;
  bool verify_;
  std::string what_;
  receive_fn on_receive_;
  accept_fn accept_;
  std::uint64_t strangers_ = 0;
  std::uint64_t oversize_ = 0;
  std::uint64_t recv_posted_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t send_completed_ = 0;
  std::uint64_t received_ = 0;
  std::uint64_t verify_errors_ = 0;
  std::deque<std::uint64_t> signaled_;  // sends done once each signaled send completes, oldest first
};

}  // namespace fabric
