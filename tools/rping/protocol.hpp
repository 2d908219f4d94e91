#pragma once
/// rping's wire format: every SEND is 16 bytes, a big-endian buffer
/// address, rkey and size; the ping data is "rdma-ping-N: " followed by a
/// cycling run of the letters 'A'..'z' and a final NUL.

#include "fabric/verbs/remote_buffer.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace rping {

inline constexpr std::size_t info_size = fabric::remote_buffer_bytes;  ///< every rping SEND
inline constexpr std::uint32_t min_size = 23;      ///< smallest -S the original accepts
inline constexpr std::uint32_t max_size = 65535;   ///< largest -S the original accepts
inline constexpr std::uint16_t default_port = 7174;

/// A buffer advertisement: where the peer may READ from or WRITE to.
using buffer_info = fabric::remote_buffer;

/// The 16 bytes on the wire.
std::array<std::byte, info_size> encode(const buffer_info& info) noexcept;

/// Decodes a received message; nullopt unless it is exactly 16 bytes.
std::optional<buffer_info> decode(std::span<const std::byte> message) noexcept;

/// Writes ping number `ping`'s data into `buf` (its whole size, NUL last).
void fill_ping(std::span<std::byte> buf, std::uint64_t ping) noexcept;

/// The text of a ping buffer: up to its first NUL, never past its end.
std::string_view ping_text(std::span<const std::byte> buf) noexcept;

}  // namespace rping
