#include "protocol.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace rping {

std::array<std::byte, info_size> encode(const buffer_info& info) noexcept { return fabric::encode_remote_buffer(info); }

std::optional<buffer_info> decode(std::span<const std::byte> message) noexcept {
  if (message.size() != info_size) return std::nullopt;
  return fabric::decode_remote_buffer(message);
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
