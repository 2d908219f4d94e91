#include "fabric/flows/payload.hpp"

namespace fabric {

namespace {
constexpr std::size_t header_bytes = 4;

std::byte pattern_byte(std::uint32_t seq, std::size_t i) noexcept {
  return static_cast<std::byte>((seq * 7U + static_cast<std::uint32_t>(i)) & 0xffU);
}
}  // namespace

void fill_payload(std::span<std::byte> out, std::uint32_t seq) noexcept {
  std::size_t start = 0;
  if (out.size() >= header_bytes) {
    for (std::size_t i = 0; i < header_bytes; ++i)
      out[i] = static_cast<std::byte>((seq >> (8 * (header_bytes - 1 - i))) & 0xffU);
    start = header_bytes;
  } else {
    seq = 0;
  }
  for (std::size_t i = start; i < out.size(); ++i) out[i] = pattern_byte(seq, i);
}

std::optional<std::uint32_t> check_payload(std::span<const std::byte> in) noexcept {
  std::uint32_t seq = 0;
  std::size_t start = 0;
  if (in.size() >= header_bytes) {
    for (std::size_t i = 0; i < header_bytes; ++i) seq = (seq << 8) | std::to_integer<std::uint32_t>(in[i]);
    start = header_bytes;
  }
  for (std::size_t i = start; i < in.size(); ++i)
    if (in[i] != pattern_byte(seq, i)) return std::nullopt;
  return seq;
}

}  // namespace fabric
