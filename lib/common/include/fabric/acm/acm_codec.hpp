#pragma once
/// The ibacm client protocol (<infiniband/acm.h>): message encoding and
/// strict decoding of replies. Pure functions over byte buffers, no I/O.
///
/// Byte order follows the service: a RESOLVE header's length is in host
/// order, PERF_QUERY and EP_QUERY headers and bodies are big-endian, path
/// records are always big-endian (as on the wire of the subnet).

#include "fabric/acm/path_record.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fabric::acm {

inline constexpr std::uint8_t protocol_version = 1;
inline constexpr std::size_t header_size = 16;
inline constexpr std::size_t entry_size = 72;
inline constexpr std::size_t address_size = 64;
inline constexpr std::size_t max_entries = 8;
/// The largest RESOLVE or PERF_QUERY message (header and 8 entries).
inline constexpr std::size_t max_message = header_size + max_entries * entry_size;
/// The fixed part of an EP_QUERY reply body (acm_ep_config_data).
inline constexpr std::size_t ep_config_size = 80;

/// Request opcodes; a reply carries the request's opcode with `ack` set.
enum class opcode : std::uint8_t { resolve = 0x01, perf_query = 0x02, ep_query = 0x03 };
inline constexpr std::uint8_t ack = 0x80;

/// Endpoint entry types.
enum class ep_type : std::uint16_t { name = 0x0001, ip = 0x0002, ip6 = 0x0003, path = 0x0010 };

/// Endpoint entry flags.
inline constexpr std::uint32_t flag_source = 1u << 0;
inline constexpr std::uint32_t flag_dest = 1u << 1;
inline constexpr std::uint32_t flag_nodelay = 1u << 30;   ///< answer from the cache only
inline constexpr std::uint32_t flag_query_sa = 1u << 31;  ///< verify a path with the SA

/// Reply status codes (ACM_STATUS_*).
enum class status : std::uint8_t {
  success = 0, enomem = 1, einval = 2, enodata = 3, enotconn = 5, etimedout = 6,
  esrcaddr = 7, esrctype = 8, edestaddr = 9, edesttype = 10,
};

/// "ENODATA", "ESRCADDR", ...; "status N" for codes outside the table.
std::string status_name(std::uint8_t s);

/// The errno rdma-core's libibacm maps a status to (for the original's
/// messages, which print strerror of it).
int status_errno(std::uint8_t s) noexcept;

/// The counter names of a PERF_QUERY reply, in wire order, as the
/// original prints them; "Unknown" past them.
std::string_view counter_name(std::size_t index) noexcept;

/// The JSON key of a counter: "error_count", "resolve_count", ...; a
/// counter past the known ones is "counter_<index>", so none collapse.
std::string counter_key(std::size_t index);

// The path record is the SA's, carried by ACM as is.
using fabric::decode_path;
using fabric::encode_path;
using fabric::path_record;
using fabric::path_record_size;

/// An IPv4 or IPv6 literal as the 4 or 16 bytes of an address entry, in
/// network order; empty when it is neither.
std::vector<std::uint8_t> ip_bytes(const std::string& text);

/// One endpoint entry: flags, type and the 64-byte address, name or path.
struct endpoint {
  std::uint32_t flags = 0;
  std::uint16_t type = 0;
  std::array<std::uint8_t, address_size> data{};

  /// An IPv4 (4 bytes) or IPv6 (16 bytes) address in network order.
  static endpoint address(std::span<const std::uint8_t> addr, std::uint32_t flags);
  /// A name, NUL-padded; throws std::length_error past 63 characters.
  static endpoint name(std::string_view text, std::uint32_t flags);
  static endpoint path(const path_record& p, std::uint32_t flags);

  /// The entry's text: a name up to its NUL, an address in presentation
  /// form; empty for a path.
  [[nodiscard]] std::string text() const;
  [[nodiscard]] path_record as_path() const noexcept;
};

/// A message header, every field in host order.
struct header {
  std::uint8_t version = protocol_version;
  std::uint8_t op = 0;
  std::uint8_t status = 0;
  std::array<std::uint8_t, 3> data{};   ///< src_out, src_index, dst_index
  std::uint16_t length = 0;
  std::uint64_t tid = 0;
};

/// Reads a header; `op` decides the length's byte order (RESOLVE host,
/// others big-endian), as the service does. `raw` holds at least 16 bytes.
header decode_header(std::span<const std::uint8_t> raw, opcode op) noexcept;

/// The largest reply the protocol allows for a request opcode.
std::size_t max_reply_length(opcode op) noexcept;

/// A RESOLVE request: 1..8 entries.
std::vector<std::uint8_t> encode_resolve(std::uint64_t tid, std::span<const endpoint> entries);

/// A PERF_QUERY of all counters (index 0) or of endpoint `index` (1-based).
std::vector<std::uint8_t> encode_perf_query(std::uint64_t tid, std::uint8_t index);

/// A PERF_QUERY of the endpoint with this source address.
std::vector<std::uint8_t> encode_perf_query(std::uint64_t tid, const endpoint& source);

/// An EP_QUERY of endpoint `index` (1-based) on `port`.
std::vector<std::uint8_t> encode_ep_query(std::uint64_t tid, std::uint8_t index, std::uint8_t port);

/// A RESOLVE reply: on success, the path entries and the source the
/// service chose (if it sent one).
struct resolve_reply {
  std::uint8_t status = 0;
  std::vector<endpoint> paths;     ///< type path, at least one on success
  std::vector<endpoint> sources;   ///< non-path entries flagged SOURCE
};

/// A PERF_QUERY reply.
struct perf_reply {
  std::uint8_t status = 0;
  std::vector<std::uint64_t> counters;
};

/// An EP_QUERY reply.
struct ep_reply {
  std::uint8_t status = 0;
  std::uint64_t dev_guid = 0;
  std::uint8_t port_num = 0;
  std::uint8_t phys_port_cnt = 0;
  std::uint16_t pkey = 0;
  std::string prov_name;
  std::vector<std::string> addrs;
};

/// Strict decoders: `msg` is one whole reply (header included) to a request
/// with transaction id `tid`. Any inconsistency (version, opcode, tid,
/// length field against the bytes, entry count, entry types) throws
/// fabric::error(exit_code::protocol) naming it; nothing past `msg` is read.
resolve_reply decode_resolve_reply(std::span<const std::uint8_t> msg, std::uint64_t tid);
perf_reply decode_perf_reply(std::span<const std::uint8_t> msg, std::uint64_t tid);
ep_reply decode_ep_reply(std::span<const std::uint8_t> msg, std::uint64_t tid);

}  // namespace fabric::acm
