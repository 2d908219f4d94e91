#pragma once
/// RDMA WRITE bandwidth between two hosts over rdma_cm, perftest's
/// ib_write_bw flow, for checks that must find a link that came up below
/// its rate (the fleet sweep's bw check): each side that writes keeps
/// several writes of `size` bytes in flight into the other's buffer, for a
/// count of writes or a time, then tells the other what it wrote in how
/// long. Both sides write at once unless the client asks for one direction.
///
/// The connection's private data carries the plan and the buffers (a
/// 4-byte mark, a version, flags, the writer's buffer, count and duration),
/// so that the server follows the client's plan and nothing but the writes
/// and one 16-byte message each way crosses the connection.

#include "fabric/base/meet.hpp"
#include "fabric/base/wait.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace fabric {

/// The largest write a plan may ask for: each side registers two buffers
/// of this size (what it writes from and what the peer writes into), well
/// within the toolkit's memory limit of 1 GiB a process.
inline constexpr std::uint32_t max_write_bytes = std::uint32_t{256} << 20;
/// Writes a side keeps in flight, so that a link of `rate_gbps` whose round
/// trip is `rtt_us` never runs dry while a completion travels back: twice
/// its bandwidth-delay product, and 8 MiB at least (a 400 Gb/s link's
/// round trip across a fabric is some 250 KB, but the adapter's and the
/// host's handling of each completion adds to it; perftest keeps 128
/// writes in flight whatever the link); no more than the link carries in
/// 4 ms, so that what is still in flight when the time is up drains soon,
/// over a slow link too; 4 MiB when its rate is unknown. At least two
/// (one on the wire while the next is posted), at most
/// max_writes_in_flight. All read the same buffer: the depth costs no memory.
inline constexpr std::uint32_t max_writes_in_flight = 64;
constexpr std::uint32_t writes_in_flight(std::uint64_t size, double rate_gbps = 0, double rtt_us = 10) {
  constexpr double least_bytes = 8.0 * (1 << 20), unknown_rate_bytes = 4.0 * (1 << 20), drain_s = 0.004;
  double bytes_per_s = rate_gbps > 0 ? rate_gbps * 1e9 / 8 : 0;
  double want = bytes_per_s > 0 ? std::max(2 * bytes_per_s * std::max(rtt_us, 0.0) / 1e6, least_bytes) : unknown_rate_bytes;
  double cap = bytes_per_s > 0 ? bytes_per_s * drain_s : unknown_rate_bytes;
  double each = static_cast<double>(std::max<std::uint64_t>(size, 1));
  double writes = std::min(want, cap) / each;
  if (!(writes < max_writes_in_flight)) return max_writes_in_flight;
  auto whole = static_cast<std::uint32_t>(writes);
  return std::max<std::uint32_t>(whole + (static_cast<double>(whole) < writes ? 1 : 0), 2);
}
/// The most writes, and the longest time, a plan may ask for.
inline constexpr std::uint64_t max_write_count = std::uint64_t{1} << 32;
inline constexpr std::chrono::milliseconds max_write_time{std::chrono::hours(1)};

/// What to measure and how.
struct bandwidth_plan {
  std::string addr;              ///< server address (client), or the address to listen on (server; empty: any)
  std::uint16_t port = 0;
  std::uint32_t size = 1 << 20;  ///< bytes per write, 1..max_write_bytes
  std::uint64_t count = 0;       ///< writes per direction; 0: write for `duration`
  std::chrono::milliseconds duration{1000};
  bool bidirectional = true;     ///< the server writes too, at the same time
  std::string source;            ///< client: the local address to leave from (empty: the route's)
};

/// One direction's writes, as its writer measured them.
struct transfer {
  std::uint64_t bytes = 0;
  double seconds = 0;            ///< from the first write posted to the last one completed
  [[nodiscard]] double gbps() const noexcept { return seconds > 0 ? static_cast<double>(bytes) * 8 / seconds / 1e9 : 0; }
};

/// What one side learned: both directions (each from its writer), once
/// the exchange ended.
struct bandwidth_outcome {
  std::optional<transfer> client_to_server;
  std::optional<transfer> server_to_client;  ///< nullopt when the client asked for one direction
  std::uint32_t size = 0;        ///< bytes per write, as agreed
  double connect_us = 0;         ///< client: from the first attempt to ESTABLISHED; server: request to ESTABLISHED
  std::string peer;              ///< "10.0.0.2:18515"
};

/// The server half: listens on plan.port, accepts one client and follows
/// its plan (plan.size here is only the largest write it allows). Throws
/// error(timeout) when no client came by bounds.meet or the exchange did
/// not end within bounds.work, error(protocol) for a request that is not
/// a bandwidth plan, error(no_device) when the device cannot take the
/// write size. Fills `out` as it goes: what was measured stands when it
/// throws (its own direction when the peer's figures did not come; what
/// its writes did so far when they did not complete in time).
void serve_bandwidth(const bandwidth_plan& plan, const pair_bounds& bounds, bandwidth_outcome& out);

/// The client half: connects (again and again while nothing listens yet,
/// until bounds.meet), writes and waits for the server's figures; fills
/// `out` as serve_bandwidth does.
void measure_bandwidth(const bandwidth_plan& plan, const pair_bounds& bounds, bandwidth_outcome& out);

/// The connection data of the exchange (pure, for tests and fuzzers).
namespace bandwidth_wire {

inline constexpr std::size_t request_bytes = 36;
inline constexpr std::size_t reply_bytes = 24;
inline constexpr std::size_t done_bytes = 16;

/// What a side says when it connects or accepts.
struct hello {
  bool bidirectional = true;     ///< request only: the server writes too
  std::uint64_t addr = 0;        ///< the sender's buffer the peer writes into
  std::uint32_t rkey = 0;
  std::uint32_t size = 0;        ///< bytes per write (and of that buffer)
  std::uint64_t count = 0;       ///< request only
  std::uint32_t duration_ms = 0; ///< request only
};

std::array<std::byte, request_bytes> encode_request(const hello& h) noexcept;
std::array<std::byte, reply_bytes> encode_reply(const hello& h) noexcept;
/// nullopt unless the bytes start with a request (or reply) of this
/// version whose numbers are within the plan's limits; trailing bytes
/// (the provider's padding) are ignored.
std::optional<hello> decode_request(std::span<const std::byte> bytes) noexcept;
std::optional<hello> decode_reply(std::span<const std::byte> bytes) noexcept;

/// A writer's figures: bytes and nanoseconds, big-endian.
std::array<std::byte, done_bytes> encode_done(const transfer& t) noexcept;
/// nullopt unless exactly 16 bytes of a possible transfer.
std::optional<transfer> decode_done(std::span<const std::byte> bytes) noexcept;

}  // namespace bandwidth_wire

}  // namespace fabric
