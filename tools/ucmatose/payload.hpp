#pragma once
/// ucmatose's --verify payload: message `seq` of a connection carries a
/// tag, its sequence number and a byte run that depends on it, so that a
/// receiver can tell a corrupted message from one of a peer that does not
/// fill its messages at all: rdma-core's ucmatose sends whatever its buffer
/// holds, which is garbage or the last message it received (its receives
/// and sends share one buffer).

#include <cstddef>
#include <cstdint>
#include <span>

namespace ucmatose {

/// The first bytes of a filled payload (messages of at least header_size).
inline constexpr std::uint8_t payload_tag[4] = {'U', 'C', 'M', 'T'};
inline constexpr std::size_t header_size = 8;  ///< tag, then big-endian u32 sequence number

/// Fills `buf` with message `seq`'s payload.
void fill_payload(std::span<std::byte> buf, std::uint32_t seq) noexcept;

/// What a received payload turned out to be.
enum class payload_check {
  match,      ///< exactly message seq's payload
  mismatch,   ///< corrupted: tagged, but the bytes fit no sequence number
  foreign,    ///< a whole, valid payload of another sequence number: an echo
  unfilled,   ///< no tag: the peer does not fill its payloads
};

/// Checks a received payload against message `seq`. Payloads shorter than
/// the header have no tag and are compared byte for byte.
payload_check check_payload(std::span<const std::byte> buf, std::uint32_t seq) noexcept;

}  // namespace ucmatose
