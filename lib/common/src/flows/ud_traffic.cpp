#include "fabric/flows/ud_traffic.hpp"

#include "fabric/flows/payload.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fabric {

ud_traffic::ud_traffic(ud_endpoint& ep, std::uint64_t expected, bool verify, std::string what, receive_fn on_receive,
                       accept_fn accept)
    : ep_(ep),
      expected_(expected),
      verify_(verify),
      what_(std::move(what)),
      on_receive_(std::move(on_receive)),
      accept_(std::move(accept)) {}

void ud_traffic::post_receives() {
  auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(ep_.config().recv_depth, expected_ - recv_posted_));
  ep_.post_recvs(n);
  recv_posted_ += n;
}

bool ud_traffic::send(const ud_destination& to, std::uint64_t count, idle_deadline& until) {
  std::uint64_t depth = ep_.config().send_depth;
  // Signaling only every half queue spares the provider a completion per message.
  std::uint64_t every = std::max<std::uint64_t>(1, depth / 2);
  std::array<ud_send, ud_endpoint::send_batch> batch{};
  for (std::uint64_t i = 0; i < count;) {
    while (sent_ - send_completed_ >= depth)
      if (!wait_some(until)) return false;
    // As many as the queue takes, up to a batch, without wrapping the slots.
    std::uint64_t first = sent_ % depth;
    std::uint64_t n = std::min({count - i, depth - (sent_ - send_completed_), depth - first, std::uint64_t{batch.size()}});
    for (std::uint64_t k = 0; k < n; ++k, ++i) {
      auto slot = static_cast<std::uint32_t>(first + k);
      fill_payload(ep_.send_slot(slot), static_cast<std::uint32_t>(i));
      batch[k] = {slot, (i + 1) % every == 0 || i + 1 == count};
    }
    ep_.post_sends(to, std::span(batch).first(n));
    for (std::uint64_t k = 0; k < n; ++k)
      if (batch[k].signaled) signaled_.push_back(sent_ + k + 1);
    sent_ += n;
  }
  return true;
}

bool ud_traffic::finish_sends(idle_deadline& until) {
  while (send_completed_ < sent_)
    if (!wait_some(until)) return false;
  return true;
}

bool ud_traffic::receive_all(idle_deadline& until, const watched_fd& also) {
  while (received_ < expected_)
    if (!wait_some(until, also)) return false;
  return true;
}

void ud_traffic::drain() {
  // What is there, a queue's worth at most: a stranger's flood goes on.
  std::array<ibv_wc, 16> wcs{};
  std::uint64_t most = std::uint64_t{ep_.config().recv_depth} + ep_.config().send_depth;
  for (std::uint64_t handled = 0; handled < most;) {
    auto n = ep_.cq().poll(wcs);
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i) completion(wcs[i]);
    handled += n;
  }
}

bool ud_traffic::wait_some(idle_deadline& until, const watched_fd& also) {
  std::array<ibv_wc, 16> wcs{};
  auto n = also.fd >= 0 ? ep_.cq().wait_or(wcs, also.fd, until.get()) : ep_.cq().wait(wcs, until.get());
  if (n == 0 && also.fd >= 0 && !until.get().expired()) {
    also.ready();  // not the peer's progress: the wait's deadline stands
    return true;
  }
  if (n == 0) return false;
  bool progress = false;
  for (std::size_t i = 0; i < n; ++i) progress = completion(wcs[i]) || progress;
  // Strangers' and oversize datagrams are not the peer's: however many
  // come, the wait ends once the peer has been silent for its limit.
  if (progress)
    until.touch();
  else if (until.get().expired())
    return false;
  return true;
}

bool ud_traffic::completion(const ibv_wc& wc) {
  if (ud_endpoint::is_send(wc)) {
    if (wc.status != IBV_WC_SUCCESS) throw wc_error(wc, fmt::format("send on {}", what_));
    if (!signaled_.empty()) {
      send_completed_ = signaled_.front();
      signaled_.pop_front();
    }
    return true;
  }
  if (wc.status == IBV_WC_LOC_LEN_ERR || wc.status == IBV_WC_LOC_QP_OP_ERR)
    // What providers report for a datagram longer than the posted buffer,
    // which holds the port's MTU: a port that delivered more than it says.
    throw error(exit_code::protocol, fmt::format("receive on {}: a datagram larger than the port's MTU arrived ({})",
                                                 what_, wc_status_name(wc.status)));
  if (wc.status != IBV_WC_SUCCESS) throw wc_error(wc, fmt::format("receive on {}", what_));
  auto slot = ud_endpoint::slot_of(wc);
  if (fabric::oversize(wc.byte_len, ep_.config().size)) {
    ++oversize_;
    ep_.post_recv(slot);
    return false;
  }
  if (accept_ && !accept_(wc, ep_.grh(slot))) {
    ++strangers_;
    ep_.post_recv(slot);
    return false;
  }
  ++received_;
  std::size_t length = wc.byte_len >= grh_bytes ? wc.byte_len - grh_bytes : 0;
  auto payload = ep_.payload(slot, length);
  if (verify_ && (length != ep_.config().size || !check_payload(payload))) ++verify_errors_;
  if (on_receive_) on_receive_(wc, payload);
  if (recv_posted_ < expected_) {
    ep_.post_recv(slot);
    ++recv_posted_;
  }
  return true;
}

}  // namespace fabric
