// Posting the messages and counting their completions.
#include "exchange.hpp"

#include "devices.hpp"
#include "messages.hpp"
#include "payload.hpp"

#include "fabric/base/error.hpp"
#include "fabric/verbs/verbs.hpp"

namespace ucmatose {

using fabric::error;
using fabric::exit_code;

message_exchange::message_exchange(const options& o, connection_table& table)
    : o_(o), table_(table), count_(static_cast<std::uint32_t>(o.messages())) {}

void message_exchange::post_sends(std::size_t i) {
  if (count_ == 0) return;
  auto& c = table_[i];
  auto size = static_cast<std::uint32_t>(o_.size);
  sges_.resize(count_);
  wrs_.resize(count_);
  for (std::uint32_t s = 0; s < count_; ++s) {
    sges_[s] = {c.dev->send_buf.addr() + std::size_t{s} * size, size, c.dev->send_buf.lkey()};
    wrs_[s] = {};
    wrs_[s].wr_id = make_wr_id(i, s, true);
    wrs_[s].opcode = IBV_WR_SEND;
    wrs_[s].send_flags = IBV_SEND_SIGNALED;
    wrs_[s].sg_list = &sges_[s];
    wrs_[s].num_sge = 1;
    wrs_[s].next = s + 1 < count_ ? &wrs_[s + 1] : nullptr;
  }
  try {
    fabric::post_send(c.qp.get(), wrs_[0]);
  } catch (const error& e) {
    // The sends before the failed one went out and will complete.
    table_.fail(i, e.what(), e.code());
    c.send_done = count_;
  }
}

void message_exchange::on_completion(const ibv_wc& wc) {
  auto [i, seq, send] = message_of(wc.wr_id);
  if (i >= table_.size()) return;
  auto& c = table_[i];
  auto& res = table_.result(i);
  ++(send ? c.send_done : c.recv_done);
  if (wc.status != IBV_WC_SUCCESS) {
    // Flushes follow a disconnect or an earlier error, which said why.
    if (wc.status != IBV_WC_WR_FLUSH_ERR) {
      std::string why = fabric::wc_error(wc, send ? "send" : "receive").what();
      if (wc.status == IBV_WC_RNR_RETRY_EXC_ERR) why += "; the peer had no receive posted (different -C?)";
      table_.fail(i, why, exit_code::test_failed);
    }
    return;
  }
  if (send) {
    ++res.sent;
    return;
  }
  ++res.received;
  if (!o_.verify) return;
  auto size = static_cast<std::size_t>(o_.size);
  auto slot = c.dev->recv_buf.bytes().subspan(recv_offset(o_, i, seq), size);
  switch (wc.byte_len != size ? payload_check::mismatch : check_payload(slot, seq)) {
    case payload_check::match: break;
    case payload_check::unfilled:
    case payload_check::foreign: ++res.unverified; break;
    case payload_check::mismatch: ++res.verify_errors; break;
  }
}

}  // namespace ucmatose
