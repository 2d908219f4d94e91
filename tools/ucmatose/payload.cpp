#include "payload.hpp"

#include <algorithm>
#include <cstring>

namespace ucmatose {

namespace {
// Multiplying by an odd constant is a bijection on 32 bits: any two
// sequence numbers differ somewhere in every four body bytes.
std::byte body_byte(std::uint32_t seq, std::size_t i) noexcept {
  std::uint32_t h = (seq + 1u) * 0x9e3779b1u;
  return static_cast<std::byte>(((h >> (8 * (i & 3u))) ^ static_cast<std::uint32_t>(i)) & 0xffu);
}
}  // namespace

void fill_payload(std::span<std::byte> buf, std::uint32_t seq) noexcept {
  std::size_t start = 0;
  if (buf.size() >= header_size) {
    std::memcpy(buf.data(), payload_tag, sizeof payload_tag);
    for (int b = 0; b < 4; ++b) buf[4 + b] = static_cast<std::byte>(seq >> (24 - 8 * b));
    start = header_size;
  }
  for (std::size_t i = start; i < buf.size(); ++i) buf[i] = body_byte(seq, i);
}

namespace {
bool body_matches(std::span<const std::byte> buf, std::uint32_t seq, std::size_t start) noexcept {
  for (std::size_t i = start; i < buf.size(); ++i)
    if (buf[i] != body_byte(seq, i)) return false;
  return true;
}
}  // namespace

payload_check check_payload(std::span<const std::byte> buf, std::uint32_t seq) noexcept {
  if (buf.size() < header_size) return body_matches(buf, seq, 0) ? payload_check::match : payload_check::mismatch;
  if (std::memcmp(buf.data(), payload_tag, sizeof payload_tag) != 0) return payload_check::unfilled;
  std::uint32_t got = 0;
  for (int b = 0; b < 4; ++b) got = (got << 8) | static_cast<std::uint32_t>(buf[4 + b]);
  if (!body_matches(buf, got, header_size)) return payload_check::mismatch;
  return got == seq ? payload_check::match : payload_check::foreign;
}

}  // namespace ucmatose
