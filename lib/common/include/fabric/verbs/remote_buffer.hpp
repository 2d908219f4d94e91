#pragma once
/// A buffer that a peer lets us READ from or WRITE to, and its 16 bytes on
/// the wire: big-endian address, rkey and size, as rping's messages and
/// the bandwidth check's connection data carry it.

#include "fabric/base/big_endian.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace fabric {

/// Where a peer may READ or WRITE.
struct remote_buffer {
  std::uint64_t addr = 0;
  std::uint32_t rkey = 0;
  std::uint32_t size = 0;
  friend bool operator==(const remote_buffer&, const remote_buffer&) = default;
};

inline constexpr std::size_t remote_buffer_bytes = 16;

/// The 16 bytes on the wire.
inline std::array<std::byte, remote_buffer_bytes> encode_remote_buffer(const remote_buffer& b) noexcept {
  std::array<std::byte, remote_buffer_bytes> out{};
  auto* p = reinterpret_cast<std::uint8_t*>(out.data());
  big_endian::store_be64(p, b.addr);
  big_endian::store_be32(p + 8, b.rkey);
  big_endian::store_be32(p + 12, b.size);
  return out;
}

/// The buffer in the first 16 bytes of `bytes`; nullopt when there are fewer.
inline std::optional<remote_buffer> decode_remote_buffer(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < remote_buffer_bytes) return std::nullopt;
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  return remote_buffer{big_endian::load_be64(p), big_endian::load_be32(p + 8), big_endian::load_be32(p + 12)};
}

}  // namespace fabric
