#pragma once
/// The payload pattern of datagram tests (udaddy, mckey --verify): each
/// message carries its sequence number and bytes derived from it, so that a
/// receiver can tell a corrupted, truncated or foreign payload from a good one.
///
/// Layout: bytes 0-3 the big-endian sequence number, then byte i is
/// (seq * 7 + i) mod 256. Messages shorter than 4 bytes carry only the
/// pattern of sequence 0.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace fabric {

/// Fills `out` with the pattern of message `seq`.
void fill_payload(std::span<std::byte> out, std::uint32_t seq) noexcept;

/// The sequence number of a payload that follows the pattern, or nothing.
std::optional<std::uint32_t> check_payload(std::span<const std::byte> in) noexcept;

}  // namespace fabric
