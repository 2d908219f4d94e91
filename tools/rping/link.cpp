#include "link.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace rping {

using fabric::error;
using fabric::exit_code;

link::link(fabric::cm_channel& channel, fabric::rc_endpoint& ep, std::uint32_t size, bool client,
           std::chrono::milliseconds timeout)
    : channel_(channel),
      ep_(ep),
      timeout_(timeout),
      recv_(ep.pd(), info_size, IBV_ACCESS_LOCAL_WRITE),
      send_(ep.pd(), info_size, 0),
      rdma_(ep.pd(), size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE) {
  if (client) start_ = fabric::registered_buffer(ep.pd(), size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
}

void link::post_recv() {
  ibv_sge sge = recv_.sge(info_size);
  ibv_recv_wr wr{};
  wr.wr_id = recv_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  fabric::post_recv(ep_.qp(), wr);
}

void link::send_info(const buffer_info& info) {
  ibv_sge sge{};
  ibv_send_wr wr = info_wr(info, sge);
  fabric::post_send(ep_.qp(), wr);
}

ibv_send_wr link::info_wr(const buffer_info& info, ibv_sge& sge) {
  auto bytes = encode(info);
  std::memcpy(send_.data(), bytes.data(), bytes.size());
  sge = send_.sge(info_size);
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  // A completion for every send would cost a wakeup each; one in
  // signal_every frees the send queue slots of the unsignaled ones before it.
  bool signaled = ++sends_ % signal_every == 0;
  wr.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | (ep_.max_inline() >= info_size ? IBV_SEND_INLINE : 0);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  return wr;
}

void link::check_cm_events() {
  while (auto ev = channel_.next(fabric::deadline::after(std::chrono::milliseconds(0)))) {
    switch (ev->type()) {
      case RDMA_CM_EVENT_DISCONNECTED:
        throw peer_gone();
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
        throw fabric::event_error(*ev, "connection");
      default:
        break;  // nothing else changes an established connection
    }
  }
}

ibv_wc link::next_completion(const char* waiting_for) {
  fabric::lazy_deadline until(timeout_);
  for (;;) {
    if (next_ == count_) {
      next_ = 0;
      count_ = ep_.cq().wait_or(polled_, channel_.fd(), until);
      if (count_ == 0) {
        check_cm_events();
        if (until.expired())
          throw error(exit_code::timeout, fmt::format("no {} from the peer within {} ms", waiting_for, timeout_.count()));
        continue;
      }
    }
    const ibv_wc& wc = polled_[next_++];
    if (wc.status == IBV_WC_WR_FLUSH_ERR) throw peer_gone();
    // A message longer than the receive: what providers report for it.
    if (wc.wr_id == recv_id && (wc.status == IBV_WC_LOC_LEN_ERR || wc.status == IBV_WC_LOC_QP_OP_ERR))
      throw error(exit_code::protocol, fmt::format("peer sent a message longer than {} bytes; rping messages are {} bytes ({})",
                                                   info_size, info_size, fabric::wc_status_name(wc.status)));
    if (wc.status != IBV_WC_SUCCESS)
      throw fabric::wc_error(wc, wc.wr_id == write_id  ? std::string("RDMA WRITE")
                                 : wc.wr_id == read_id ? std::string("RDMA READ")
                                                       : fmt::format("waiting for {}", waiting_for));
    // Our own SENDs need no attention once they succeeded.
    if (wc.opcode == IBV_WC_SEND) continue;
    return wc;
  }
}

buffer_info link::await_info() { return take_info(next_completion("message")); }

buffer_info link::take_info(const ibv_wc& wc) {
  if (wc.opcode != IBV_WC_RECV)
    throw error(exit_code::protocol, fmt::format("unexpected completion (opcode {}) while waiting for a message", static_cast<int>(wc.opcode)));
  auto info = decode({recv_.data(), std::min<std::size_t>(wc.byte_len, recv_.size())});
  if (!info || wc.byte_len != info_size)
    throw error(exit_code::protocol, fmt::format("peer sent a {}-byte message; rping messages are {} bytes", wc.byte_len, info_size));
  post_recv();
  return *info;
}

buffer_info link::read_then_send(const buffer_info& remote, std::uint32_t length, const buffer_info& info) {
  post_then_send(IBV_WR_RDMA_READ, read_id, remote, length, info);
  // The READ's completion and the peer's answer come in either order.
  bool read_done = false;
  std::optional<buffer_info> answer;
  while (!read_done || !answer) {
    ibv_wc wc = next_completion(read_done ? "message" : "RDMA READ completion");
    if (wc.opcode == IBV_WC_RDMA_READ) {
      read_done = true;
    } else if (!answer) {
      answer = take_info(wc);
    } else {
      throw error(exit_code::protocol, "peer sent two messages while an RDMA READ of it was in flight");
    }
  }
  return *answer;
}

void link::write_then_send(const buffer_info& remote, std::uint32_t length, const buffer_info& info) {
  post_then_send(IBV_WR_RDMA_WRITE, write_id, remote, length, info);
}

void link::post_then_send(ibv_wr_opcode op, std::uint64_t wr_id, const buffer_info& remote, std::uint32_t length,
                          const buffer_info& info) {
  ibv_sge rdma_sge = rdma_.sge(length);
  // Only the READ is waited for; a WRITE that fails still completes.
  ibv_send_wr rdma = fabric::rdma_wr(op, rdma_sge, remote, wr_id, op == IBV_WR_RDMA_READ);
  ibv_sge send_sge{};
  ibv_send_wr send = info_wr(info, send_sge);
  rdma.next = &send;
  fabric::post_send(ep_.qp(), rdma);
}

}  // namespace rping
