#pragma once
/// Unreliable-datagram endpoints on rdma_cm ids, shared by udaddy and mckey:
/// the UD QP, receive slots with room for the GRH and for the largest
/// datagram the port delivers, SEND_WITH_IMM carrying the sender's QPN,
/// address handles, and the path MTU check.

#include "fabric/base/error.hpp"
#include "fabric/base/handles.hpp"
#include "fabric/verbs/ports.hpp"
#include "fabric/base/idle_deadline.hpp"
#include "fabric/verbs/verbs.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace fabric {

/// The Q_Key the kernel's rdma_cm gives UD QPs in the UDP port space.
inline constexpr std::uint32_t udp_qkey = 0x01234567;

/// Bytes at the front of every UD receive buffer where the GRH lands.
inline constexpr std::size_t grh_bytes = sizeof(ibv_grh);

/// The source GID of a received datagram's 40 header bytes: a GRH's or an
/// IPv6 header's source, or for RoCE v2 over IPv4 (an IPv4 header in the
/// last 20 bytes) the IPv4-mapped source address; empty when neither.
std::optional<ibv_gid> source_gid(const ibv_grh& grh);

/// Whether a datagram came from the source an rdma_cm exchange named:
/// with a GRH, its source GID (source_gid) must be `source` (for RoCE the GID of the
/// peer's IP address, for InfiniBand the path's); without one (InfiniBand
/// within a subnet) there is nothing to compare. Once `qpn` is known, the
/// sending QP must be it.
bool from_source(const ibv_wc& wc, const ibv_grh& grh, const ibv_gid& source, std::optional<std::uint32_t> qpn);

/// The GID a RoCE peer at `addr` sends from: its IPv6 address, or the
/// IPv4-mapped one; empty for other families.
std::optional<ibv_gid> roce_gid_of(const sockaddr* addr);

/// Bytes a receive needs beyond its slot's `size` payload bytes so that a
/// datagram as large as the port's active MTU (`port_mtu` bytes; 0 when
/// unknown: largest_mtu) still fits: a longer datagram than agreed is then
/// a completion to count and drop, not a receive error that ends the QP.
std::uint32_t spill_bytes(std::uint32_t size, std::uint32_t port_mtu) noexcept;

/// Whether a receive completion of `byte_len` bytes (GRH included) carries
/// more payload than the `size` bytes agreed.
[[nodiscard]] constexpr bool oversize(std::uint32_t byte_len, std::uint32_t size) noexcept {
  return byte_len > grh_bytes + std::uint64_t{size};
}

/// The error for a datagram that cannot fit the path, or nothing when it
/// fits: "message size 2000 is larger than the path MTU 1024 of rxe0 port 1".
std::optional<std::string> ud_size_problem(std::size_t size, const port_info& port);

/// Throws error(no_device) when `size` does not fit the port's path MTU:
/// the same command line is valid on a port with a larger MTU.
void check_ud_size(std::size_t size, const port_info& port);

/// A number in C's base-0 syntax (12, 0x1c, 017) within [0, max], as the
/// originals read numeric options with strtoul.
std::optional<unsigned long> parse_number(const std::string& text, unsigned long max);

/// The UD port space of -P (udp, ipoib: a case-insensitive prefix match, as
/// rdma-core's tools do) or else of -p (0x111, 0x2); UDP when both are empty.
std::optional<rdma_port_space> parse_port_space(const std::string& name, const std::string& number);

/// "udp", "ipoib", or the number in hex.
std::string port_space_name(rdma_port_space ps);

/// Queue sizes of a UD endpoint, clamped to the device's limits by clamp_depths.
struct ud_config {
  std::uint32_t size = 0;          ///< payload bytes of each message
  std::uint32_t send_depth = 1;    ///< send work requests (and send slots)
  std::uint32_t recv_depth = 1;    ///< receive slots, each grh_bytes + size (grh_bytes without keep_payloads)
  bool block_self_loopback = false;  ///< ask for IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
  /// Whether each receive keeps its payload for payload() to read. Without,
  /// a receive keeps only its GRH and every payload lands in one area the
  /// receives share: what a run needs that reads only a datagram's source
  /// and length, for a fraction of the memory to register.
  bool keep_payloads = true;
};

/// The deepest send queue clamp_depths asks for: its slots are reused as
/// sends complete, so more would only register more memory.
inline constexpr std::uint32_t max_send_depth = 256;

/// Depths for `count` messages each way, clamped so that both queues and
/// their shared CQ fit the device: at least 1 each, the send queue at most
/// max_send_depth.
ud_config clamp_depths(ud_config cfg, std::uint64_t count, const port_info& port) noexcept;

/// The most bytes of message buffers a run registers over all its QPs.
/// A UD receiver posts a slot for every message it expects (datagrams
/// have no flow control), so -c x -C x -S can ask for tens of GB; above
/// this it is a usage error instead.
inline constexpr std::uint64_t max_buffer_bytes = std::uint64_t{1} << 30;

/// Where things lie in the one buffer an endpoint of a ud_config registers:
/// its receive slots (a GRH each, and the payload when kept), its send
/// slots, then the area the receives share (the payloads when not kept,
/// then `spill` bytes of overflow).
struct ud_layout {
  std::uint64_t recv_stride = 0;  ///< one receive slot's bytes
  std::uint64_t send_at = 0;      ///< where the send slots start
  std::uint64_t shared_at = 0;    ///< where the shared area starts
  std::uint32_t shared = 0;       ///< its length; may be 0
  std::uint64_t bytes = 0;        ///< all of it: what is registered

  static ud_layout of(const ud_config& cfg, std::uint32_t spill) noexcept;
};

/// Throws a usage error, naming the options to lower, when `qps`
/// endpoints of `cfg` need more than max_buffer_bytes (each endpoint's
/// spill area counted at its largest, largest_mtu bytes).
void check_buffer_budget(const ud_config& cfg, std::uint64_t qps);

/// One send of a whole send slot, and whether it asks for a completion.
struct ud_send {
  std::uint32_t slot = 0;
  bool signaled = false;
};

/// Where datagrams go: an address handle, remote QPN and Q_Key.
/// Destroy it before the endpoint whose PD created the AH.
struct ud_destination {
  address_handle ah;
  std::uint32_t qpn = 0;
  std::uint32_t qkey = 0;
};

/// PD, CQ, UD QP on an rdma_cm id, and registered send and receive slots.
/// Work request ids tell sends from receives and name the slot. Each
/// receive scatters into its slot (GRH and `size` payload bytes; only the
/// GRH without keep_payloads, the payload then going to an area the
/// receives share) and then into one spill area the receives share, so
/// that it holds a datagram as large as the port's active MTU: no
/// datagram, whoever sends it, can fail a receive and with it the QP.
/// What lands in a shared area is never read.
class ud_endpoint {
public:
  /// Creates everything on `id` (which must be bound to a device). With
  /// cfg.block_self_loopback, falls back to a plain QP when the provider
  /// refuses the flag; loopback_blocked() tells which one was made.
  ud_endpoint(rdma_cm_id* id, const ud_config& cfg);
  ud_endpoint(const ud_endpoint&) = delete;
  ud_endpoint& operator=(const ud_endpoint&) = delete;

  [[nodiscard]] rdma_cm_id* id() const noexcept { return id_; }
  [[nodiscard]] ibv_qp* qp() const noexcept { return qp_.get(); }
  [[nodiscard]] std::uint32_t qpn() const noexcept { return qp_.get()->qp_num; }
  [[nodiscard]] ibv_pd* pd() const noexcept { return pd_.get(); }
  [[nodiscard]] event_cq& cq() noexcept { return *cq_; }
  [[nodiscard]] const ud_config& config() const noexcept { return cfg_; }
  /// True when the QP blocks its own multicast loopback.
  [[nodiscard]] bool loopback_blocked() const noexcept { return loopback_blocked_; }
  /// Why blocking loopback was not possible (empty when not asked or granted).
  [[nodiscard]] const std::string& loopback_note() const noexcept { return loopback_note_; }

  /// The QP's own Q_Key (ibv_query_qp), which a reply to a peer carries.
  [[nodiscard]] std::uint32_t qkey() const;

  /// Posts the receive of slot `slot` (grh_bytes + size bytes, then the
  /// spill area).
  void post_recv(std::uint32_t slot);
  /// Posts the first `n` receive slots.
  void post_recvs(std::uint32_t n);

  /// The payload of receive slot `slot` (after the GRH), `length` bytes
  /// long but never more than size; empty without keep_payloads.
  [[nodiscard]] std::span<const std::byte> payload(std::uint32_t slot, std::size_t length) const noexcept;
  /// Send slot `slot`, size bytes, to fill before posting.
  [[nodiscard]] std::span<std::byte> send_slot(std::uint32_t slot) const noexcept;

  /// Posts a SEND_WITH_IMM of the whole send slot to `to`, with the
  /// immediate data the big-endian own QPN (how rdma-core's tools say who
  /// sent a datagram).
  void post_send(const ud_destination& to, std::uint32_t slot, bool signaled);
  /// Posts several such sends as linked work requests, up to
  /// `send_batch` per post: providers ring their doorbell (for Soft-RoCE,
  /// a system call) once per post, not once per message.
  void post_sends(const ud_destination& to, std::span<const ud_send> sends);
  static constexpr std::size_t send_batch = 32;

  /// An AH for an address vector (from a CM event).
  [[nodiscard]] address_handle create_ah(const ibv_ah_attr& attr) const;
  /// An AH back to the sender of a received datagram, from its completion
  /// and the GRH in its receive slot.
  [[nodiscard]] address_handle create_reply_ah(const ibv_wc& wc) const;
  /// A copy of the GRH of receive slot `slot` (meaningful when its
  /// completion has IBV_WC_GRH).
  [[nodiscard]] ibv_grh grh(std::uint32_t slot) const;

  /// Whether a completion is of a send; otherwise it is of a receive.
  [[nodiscard]] static bool is_send(const ibv_wc& wc) noexcept { return (wc.wr_id & send_flag) != 0; }
  /// The slot a completion's work request used.
  [[nodiscard]] static std::uint32_t slot_of(const ibv_wc& wc) noexcept {
    return static_cast<std::uint32_t>(wc.wr_id & ~send_flag);
  }

private:
  static constexpr std::uint64_t send_flag = std::uint64_t{1} << 63;

  rdma_cm_id* id_;
  ud_config cfg_;
  bool loopback_blocked_ = false;
  std::string loopback_note_;
  // Members go bottom-up: the QP first, then the buffers' MRs, the CQ, the PD.
  protection_domain pd_;
  std::unique_ptr<event_cq> cq_;
  ud_layout layout_;
  registered_buffer buf_;  // laid out as layout_ says
  cm_qp qp_;
};

}  // namespace fabric
