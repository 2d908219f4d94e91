#include "protocol.hpp"

#include <endian.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace rping {

std::array<std::byte, info_size> encode(const buffer_info& info) noexcept {
  std::array<std::byte, info_size> out{};
  std::uint64_t addr = htobe64(info.addr);
  std::uint32_t rkey = htobe32(info.rkey);
  std::uint32_t size = htobe32(info.size);
  std::memcpy(out.data(), &addr, 8);
  std::memcpy(out.data() + 8, &rkey, 4);
  std::memcpy(out.data() + 12, &size, 4);
  return out;
}

std::optional<buffer_info> decode(std::span<const std::byte> message) noexcept {
  if (message.size() != info_size) return std::nullopt;
  std::uint64_t addr;
  std::uint32_t rkey, size;
  std::memcpy(&addr, message.data(), 8);
  std::memcpy(&rkey, message.data() + 8, 4);
  std::memcpy(&size, message.data() + 12, 4);
  return buffer_info{be64toh(addr), be32toh(rkey), be32toh(size)};
}

void fill_ping(std::span<std::byte> buf, std::uint64_t ping) noexcept {
  if (buf.empty()) return;
  char prefix[32];
  int n = std::snprintf(prefix, sizeof prefix, "rdma-ping-%d: ", static_cast<int>(ping));
  std::size_t head = std::min(static_cast<std::size_t>(n), buf.size());
  std::memcpy(buf.data(), prefix, head);
  // The letters run 'A'..'z' (65..122) and start one further on each ping.
  unsigned c = 65 + static_cast<unsigned>(ping % 58);
  for (std::size_t i = head; i < buf.size(); ++i) {
    buf[i] = static_cast<std::byte>(c);
    if (++c > 122) c = 65;
  }
  buf.back() = std::byte{0};
}

std::string_view ping_text(std::span<const std::byte> buf) noexcept {
  const char* p = reinterpret_cast<const char*>(buf.data());
  return {p, strnlen(p, buf.size())};
}

}  // namespace rping
