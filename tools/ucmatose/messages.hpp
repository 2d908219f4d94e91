#pragma once
/// Where each message of the data phase is: its work request id, which
/// names its connection, direction and sequence number, and its receive
/// slot in a device's buffer; and the receives of one connection, posted
/// when its QP is made. Owns nothing: the QPs and buffers are the device
/// pool's, the counting the message exchange's.

#include "options.hpp"

#include "fabric/verbs/verbs.hpp"

#include <cstddef>
#include <cstdint>

namespace ucmatose {

/// A work request id: connection index, send or receive, sequence number.
std::uint64_t make_wr_id(std::size_t index, std::uint32_t seq, bool send) noexcept;

/// What a work request id names.
struct message_ref {
  std::size_t index = 0;   ///< the connection
  std::uint32_t seq = 0;   ///< the message's sequence number
  bool send = false;       ///< a send, else a receive
};
message_ref message_of(std::uint64_t wr_id) noexcept;

/// Receive `seq` of connection `index`: its byte offset in the device's
/// receive buffer. With --verify each message has a slot of its own, so
/// that every payload can be checked; otherwise they share one.
std::size_t recv_offset(const options& o, std::size_t index, std::uint32_t seq) noexcept;

/// Posts connection `index`'s receives, one per message, on `qp` into
/// `recv_buf`. Called on the QP helper's thread too: it writes nothing shared.
void post_recvs(ibv_qp* qp, std::size_t index, const fabric::registered_buffer& recv_buf, const options& o);

}  // namespace ucmatose
