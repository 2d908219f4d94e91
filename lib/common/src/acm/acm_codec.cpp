#include "fabric/acm/acm_codec.hpp"

#include "fabric/base/big_endian.hpp"

#include "fabric/base/error.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fabric::acm {

namespace {

using namespace fabric::big_endian;

// RESOLVE headers and entry flags/types are in the host's order: the
// service and its clients share a machine.
template <class T>
T load_host(const std::uint8_t* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void store_host(std::uint8_t* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);
}

[[noreturn]] void malformed(const std::string& why) { throw error(exit_code::protocol, "malformed ACM reply: " + why); }

std::vector<std::uint8_t> make_header(opcode op, std::uint64_t tid, std::size_t length) {
  std::vector<std::uint8_t> msg(length, 0);
  msg[0] = protocol_version;
  msg[1] = static_cast<std::uint8_t>(op);
  if (op == opcode::resolve)
    store_host(msg.data() + 6, static_cast<std::uint16_t>(length));
  else
    store_be16(msg.data() + 6, static_cast<std::uint16_t>(length));
  store_host(msg.data() + 8, tid);
  return msg;
}

void store_entry(std::uint8_t* p, const endpoint& e) noexcept {
  store_host(p, e.flags);
  store_host(p + 4, e.type);
  std::memcpy(p + 8, e.data.data(), address_size);
}

endpoint load_entry(const std::uint8_t* p) noexcept {
  endpoint e;
  e.flags = load_host<std::uint32_t>(p);
  e.type = load_host<std::uint16_t>(p + 4);
  std::memcpy(e.data.data(), p + 8, address_size);
  return e;
}

std::string bounded_text(const std::uint8_t* p, std::size_t max) {
  const auto* end = std::find(p, p + max, std::uint8_t{0});
  return {reinterpret_cast<const char*>(p), static_cast<std::size_t>(end - p)};
}

/// Checks what every reply shares; returns the decoded header.
header check_common(std::span<const std::uint8_t> msg, std::uint64_t tid, opcode op) {
  if (msg.size() < header_size) malformed(fmt::format("{} bytes, shorter than the 16-byte header", msg.size()));
  header h = decode_header(msg, op);
  if (h.version != protocol_version) malformed(fmt::format("version {}, expected {}", h.version, protocol_version));
  auto want_op = static_cast<std::uint8_t>(static_cast<std::uint8_t>(op) | ack);
  // ibacm's default provider answers a successful RESOLVE with the
  // request's header as it came, without the ACK bit; accept both there.
  bool unacked_resolve = op == opcode::resolve && h.op == static_cast<std::uint8_t>(op);
  if (h.op != want_op && !unacked_resolve)
    malformed(fmt::format("opcode 0x{:02x}, expected 0x{:02x}", h.op, want_op));
  if (h.tid != tid) malformed(fmt::format("transaction id {}, expected {}", h.tid, tid));
  if (h.length != msg.size())
    malformed(fmt::format("length field {} but {} bytes received", h.length, msg.size()));
  return h;
}

}  // namespace

std::string status_name(std::uint8_t s) {
  switch (static_cast<status>(s)) {
    case status::success: return "SUCCESS";
    case status::enomem: return "ENOMEM";
    case status::einval: return "EINVAL";
    case status::enodata: return "ENODATA";
    case status::enotconn: return "ENOTCONN";
    case status::etimedout: return "ETIMEDOUT";
    case status::esrcaddr: return "ESRCADDR";
    case status::esrctype: return "ESRCTYPE";
    case status::edestaddr: return "EDESTADDR";
    case status::edesttype: return "EDESTTYPE";
  }
  return fmt::format("status {}", s);
}

int status_errno(std::uint8_t s) noexcept {
  switch (static_cast<status>(s)) {
    case status::success: return 0;
    case status::enomem: return ENOMEM;
    case status::enodata: return ENODATA;
    case status::enotconn: return ENOTCONN;
    case status::etimedout: return ETIMEDOUT;
    case status::esrcaddr:
    case status::edestaddr: return EADDRNOTAVAIL;
    default: return EINVAL;
  }
}

std::string_view counter_name(std::size_t index) noexcept {
  static constexpr std::string_view names[] = {"Error Count",      "Resolve Count",    "No Data",
                                               "Addr Query Count", "Addr Cache Count", "Route Query Count",
                                               "Route Cache Count"};
  // libibacm accepts one index past the table (ACM_MAX_COUNTER) and reads
  // past it; name it like any other unknown counter.
  return index < std::size(names) ? names[index] : "Unknown";
}

std::string counter_key(std::size_t index) {
  static constexpr std::string_view keys[] = {"error_count",      "resolve_count",    "no_data",
                                              "addr_query_count", "addr_cache_count", "route_query_count",
                                              "route_cache_count"};
  return index < std::size(keys) ? std::string(keys[index]) : fmt::format("counter_{}", index);
}

std::vector<std::uint8_t> ip_bytes(const std::string& text) {
  std::vector<std::uint8_t> b(16);
  if (inet_pton(AF_INET, text.c_str(), b.data()) > 0) {
    b.resize(4);
    return b;
  }
  if (inet_pton(AF_INET6, text.c_str(), b.data()) > 0) return b;
  return {};
}

endpoint endpoint::address(std::span<const std::uint8_t> addr, std::uint32_t flags) {
  if (addr.size() != 4 && addr.size() != 16) throw std::invalid_argument("an IP address is 4 or 16 bytes");
  endpoint e;
  e.flags = flags;
  e.type = static_cast<std::uint16_t>(addr.size() == 4 ? ep_type::ip : ep_type::ip6);
  std::copy(addr.begin(), addr.end(), e.data.begin());
  return e;
}

endpoint endpoint::name(std::string_view text, std::uint32_t flags) {
  if (text.size() >= address_size) throw std::length_error("name longer than 63 characters");
  endpoint e;
  e.flags = flags;
  e.type = static_cast<std::uint16_t>(ep_type::name);
  std::copy(text.begin(), text.end(), e.data.begin());
  return e;
}

endpoint endpoint::path(const path_record& p, std::uint32_t flags) {
  endpoint e;
  e.flags = flags;
  e.type = static_cast<std::uint16_t>(ep_type::path);
  e.data = encode_path(p);
  return e;
}

std::string endpoint::text() const {
  char buf[INET6_ADDRSTRLEN] = {};
  switch (static_cast<ep_type>(type)) {
    case ep_type::ip: return inet_ntop(AF_INET, data.data(), buf, sizeof buf) ? buf : "";
    case ep_type::ip6: return inet_ntop(AF_INET6, data.data(), buf, sizeof buf) ? buf : "";
    case ep_type::name: return bounded_text(data.data(), address_size);
    default: return {};
  }
}

path_record endpoint::as_path() const noexcept { return decode_path(std::span<const std::uint8_t, 64>(data)); }

header decode_header(std::span<const std::uint8_t> raw, opcode op) noexcept {
  header h;
  h.version = raw[0];
  h.op = raw[1];
  h.status = raw[2];
  std::copy_n(raw.data() + 3, 3, h.data.begin());
  h.length = op == opcode::resolve ? load_host<std::uint16_t>(raw.data() + 6) : load_be16(raw.data() + 6);
  h.tid = load_host<std::uint64_t>(raw.data() + 8);
  return h;
}

std::size_t max_reply_length(opcode op) noexcept {
  // An EP_QUERY reply grows with the endpoint's addresses up to what a
  // 16-bit length can say.
  return op == opcode::ep_query ? 0xffff : max_message;
}

std::vector<std::uint8_t> encode_resolve(std::uint64_t tid, std::span<const endpoint> entries) {
  if (entries.empty() || entries.size() > max_entries) throw std::invalid_argument("a resolve request has 1 to 8 entries");
  auto msg = make_header(opcode::resolve, tid, header_size + entries.size() * entry_size);
  for (std::size_t i = 0; i < entries.size(); ++i) store_entry(msg.data() + header_size + i * entry_size, entries[i]);
  return msg;
}

std::vector<std::uint8_t> encode_perf_query(std::uint64_t tid, std::uint8_t index) {
  auto msg = make_header(opcode::perf_query, tid, header_size);
  msg[4] = index;  // src_index
  return msg;
}

std::vector<std::uint8_t> encode_perf_query(std::uint64_t tid, const endpoint& source) {
  auto msg = make_header(opcode::perf_query, tid, header_size + entry_size);
  store_entry(msg.data() + header_size, source);
  return msg;
}

std::vector<std::uint8_t> encode_ep_query(std::uint64_t tid, std::uint8_t index, std::uint8_t port) {
  auto msg = make_header(opcode::ep_query, tid, header_size);
  msg[3] = index;  // src_out
  msg[4] = port;   // src_index
  return msg;
}

resolve_reply decode_resolve_reply(std::span<const std::uint8_t> msg, std::uint64_t tid) {
  header h = check_common(msg, tid, opcode::resolve);
  std::size_t body = msg.size() - header_size;
  if (body % entry_size != 0) malformed(fmt::format("{} body bytes, not a whole number of 72-byte entries", body));
  std::size_t count = body / entry_size;
  if (count > max_entries) malformed(fmt::format("{} entries, at most {} allowed", count, max_entries));
  resolve_reply r;
  r.status = h.status;
  if (h.status != 0) return r;  // the entries of a failed request carry nothing
  for (std::size_t i = 0; i < count; ++i) {
    endpoint e = load_entry(msg.data() + header_size + i * entry_size);
    if (e.type == static_cast<std::uint16_t>(ep_type::path)) {
      r.paths.push_back(e);
      continue;
    }
    bool known = e.type == static_cast<std::uint16_t>(ep_type::ip) || e.type == static_cast<std::uint16_t>(ep_type::ip6) ||
                 e.type == static_cast<std::uint16_t>(ep_type::name);
    if (!(e.flags & flag_source) || !known)
      malformed(fmt::format("entry {} has type 0x{:x} flags 0x{:x}, neither a path nor a source address", i, e.type,
                            e.flags));
    r.sources.push_back(e);
  }
  if (r.paths.empty()) malformed("success without a path record");
  return r;
}

perf_reply decode_perf_reply(std::span<const std::uint8_t> msg, std::uint64_t tid) {
  header h = check_common(msg, tid, opcode::perf_query);
  perf_reply r;
  r.status = h.status;
  if (h.status != 0) return r;
  std::size_t count = h.data[0];
  if (msg.size() != header_size + count * 8)
    malformed(fmt::format("{} counters announced but {} body bytes", count, msg.size() - header_size));
  for (std::size_t i = 0; i < count; ++i) r.counters.push_back(load_be64(msg.data() + header_size + i * 8));
  return r;
}

ep_reply decode_ep_reply(std::span<const std::uint8_t> msg, std::uint64_t tid) {
  header h = check_common(msg, tid, opcode::ep_query);
  ep_reply r;
  r.status = h.status;
  if (h.status != 0) return r;
  if (msg.size() < header_size + ep_config_size)
    malformed(fmt::format("endpoint data of {} bytes, shorter than {}", msg.size() - header_size, ep_config_size));
  const auto* p = msg.data() + header_size;
  r.dev_guid = load_be64(p);
  r.port_num = p[8];
  r.phys_port_cnt = p[9];
  r.pkey = load_be16(p + 12);
  std::size_t addr_cnt = load_be16(p + 14);
  r.prov_name = bounded_text(p + 16, 64);
  if (msg.size() != header_size + ep_config_size + addr_cnt * address_size)
    malformed(fmt::format("{} addresses announced but {} address bytes", addr_cnt,
                          msg.size() - header_size - ep_config_size));
  for (std::size_t i = 0; i < addr_cnt; ++i)
    r.addrs.push_back(bounded_text(p + ep_config_size + i * address_size, address_size));
  return r;
}

}  // namespace fabric::acm
