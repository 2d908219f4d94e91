#pragma once
/// The InfiniBand path record (IBTA 15.2.5.16) as the SA answers it and ACM
/// carries it, and the MTU and rate enums its fields use.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace fabric {

/// A decoded ibv_path_record (every field in host order).
struct path_record {
  std::uint64_t service_id = 0;
  std::array<std::uint8_t, 16> dgid{};
  std::array<std::uint8_t, 16> sgid{};
  std::uint16_t dlid = 0;
  std::uint16_t slid = 0;
  bool raw_traffic = false;
  std::uint32_t flow_label = 0;   ///< 20 bits
  std::uint8_t hop_limit = 0;
  std::uint8_t tclass = 0;
  bool reversible = false;
  std::uint8_t numb_path = 0;     ///< 7 bits
  std::uint16_t pkey = 0;
  std::uint16_t qos_class = 0;    ///< 12 bits
  std::uint8_t sl = 0;            ///< 4 bits
  std::uint8_t mtu_selector = 0;
  std::uint8_t mtu = 0;           ///< IB MTU enum (1 = 256 ... 5 = 4096)
  std::uint8_t rate_selector = 0;
  std::uint8_t rate = 0;          ///< IB rate enum
  std::uint8_t packet_life_time_selector = 0;
  std::uint8_t packet_life_time = 0;
  std::uint8_t preference = 0;

  friend bool operator==(const path_record&, const path_record&) = default;
};

/// Size of a path record on the wire.
inline constexpr std::size_t path_record_size = 64;

/// Decodes the 64-byte big-endian record.
path_record decode_path(std::span<const std::uint8_t, path_record_size> raw) noexcept;

/// Encodes a record into 64 big-endian bytes (reserved bytes zero).
std::array<std::uint8_t, path_record_size> encode_path(const path_record& p) noexcept;

/// The IB rate enum in Gb/s as ibacm's min_rate counts it (2 -> 2.5 ...); 0 when unknown.
double rate_gbps(unsigned rate_enum) noexcept;

}  // namespace fabric
