#pragma once
/// The buffers and work requests of one rping connection, and the steps of
/// the protocol built on them; every wait is bounded.

#include "protocol.hpp"

#include "fabric/base/error.hpp"
#include "fabric/cm/rc.hpp"
#include "fabric/verbs/verbs.hpp"

#include <array>
#include <chrono>
#include <cstddef>

namespace rping {

/// The peer went away (its disconnect flushed our receive): the normal end
/// of a server's connection when it happens between pings.
class peer_gone : public fabric::error {
public:
  peer_gone() : fabric::error(fabric::exit_code::connect_failed, "peer disconnected") {}
};

/// One connection's buffers: the 16-byte receive and send messages, the
/// RDMA buffer (the server's READ target, the client's WRITE sink), and the
/// client's start buffer (the server READs it).
class link {
public:
  /// `channel` carries the connection's CM events: a DISCONNECTED there
  /// ends any wait with peer_gone.
  link(fabric::cm_channel& channel, fabric::rc_endpoint& ep, std::uint32_t size, bool client,
       std::chrono::milliseconds timeout);

  /// Posts the one receive each side keeps outstanding.
  void post_recv();

  /// SENDs a buffer advertisement.
  void send_info(const buffer_info& info);

  /// Waits for the next message; throws error(protocol) unless it is 16
  /// bytes, peer_gone when the connection was torn down. Re-posts the receive.
  buffer_info await_info();

  /// RDMA READs `length` bytes of the peer's buffer into ours and SENDs
  /// `info` right behind it, in one post (one doorbell): RC keeps their
  /// order, so the peer's answer to `info` travels while the READ's
  /// response does, and the ping saves a round trip. Waits for both the
  /// READ and that answer, which may complete in either order; returns the
  /// answer. The peer must not change its buffer before it hears again,
  /// which the protocol's next step (the WRITE back, then a SEND) ensures.
  buffer_info read_then_send(const buffer_info& remote, std::uint32_t length, const buffer_info& info);

  /// RDMA WRITE to the peer's buffer, then SENDs `info`, in one post (one
  /// doorbell). The WRITE is not waited for: the SEND reaches the peer after
  /// it (RC keeps a QP's order) and one ACK covers both, so the ping saves
  /// the round trip of the WRITE's own completion. A WRITE that fails still
  /// completes, and ends the next wait naming it.
  void write_then_send(const buffer_info& remote, std::uint32_t length, const buffer_info& info);

  [[nodiscard]] const fabric::registered_buffer& rdma_buf() const noexcept { return rdma_; }
  [[nodiscard]] const fabric::registered_buffer& start_buf() const noexcept { return start_; }

private:
  /// Posts the RDMA `op` between our rdma buffer and `remote`, and the SEND
  /// of `info` behind it, as one post.
  void post_then_send(ibv_wr_opcode op, std::uint64_t wr_id, const buffer_info& remote, std::uint32_t length,
                      const buffer_info& info);

  /// The SEND of `info` from the send buffer, its one entry in `sge`.
  ibv_send_wr info_wr(const buffer_info& info, ibv_sge& sge);

  ibv_wc next_completion(const char* waiting_for);

  /// The message a receive completion carries; re-posts the receive.
  buffer_info take_info(const ibv_wc& wc);

  void check_cm_events();

  fabric::cm_channel& channel_;
  fabric::rc_endpoint& ep_;
  std::chrono::milliseconds timeout_;
  fabric::registered_buffer recv_;
  fabric::registered_buffer send_;
  fabric::registered_buffer rdma_;
  fabric::registered_buffer start_;
  static constexpr unsigned signal_every = 8;  // well below the send queue depth
  static constexpr std::uint64_t write_id = 1;  // the wr_id of the WRITE back
  static constexpr std::uint64_t read_id = 2;   // the wr_id of the READ
  static constexpr std::uint64_t recv_id = 3;   // the wr_id of the receive
  unsigned sends_ = 0;
  std::array<ibv_wc, 8> polled_{};
  std::size_t next_ = 0, count_ = 0;
};

}  // namespace rping
