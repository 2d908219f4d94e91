#include "fabric/acm/path_record.hpp"

#include "fabric/base/big_endian.hpp"

#include <algorithm>

namespace fabric {

using namespace fabric::big_endian;

path_record decode_path(std::span<const std::uint8_t, path_record_size> raw) noexcept {
  const auto* p = raw.data();
  path_record r;
  r.service_id = load_be64(p);
  std::copy_n(p + 8, 16, r.dgid.begin());
  std::copy_n(p + 24, 16, r.sgid.begin());
  r.dlid = load_be16(p + 40);
  r.slid = load_be16(p + 42);
  std::uint32_t fl = load_be32(p + 44);
  r.raw_traffic = (fl >> 31) != 0;
  r.flow_label = (fl >> 8) & 0xfffff;
  r.hop_limit = static_cast<std::uint8_t>(fl);
  r.tclass = p[48];
  r.reversible = (p[49] & 0x80) != 0;
  r.numb_path = p[49] & 0x7f;
  r.pkey = load_be16(p + 50);
  std::uint16_t qs = load_be16(p + 52);
  r.qos_class = qs >> 4;
  r.sl = qs & 0xf;
  r.mtu_selector = p[54] >> 6;
  r.mtu = p[54] & 0x3f;
  r.rate_selector = p[55] >> 6;
  r.rate = p[55] & 0x3f;
  r.packet_life_time_selector = p[56] >> 6;
  r.packet_life_time = p[56] & 0x3f;
  r.preference = p[57];
  return r;
}

std::array<std::uint8_t, path_record_size> encode_path(const path_record& r) noexcept {
  std::array<std::uint8_t, path_record_size> raw{};
  auto* p = raw.data();
  store_be64(p, r.service_id);
  std::copy(r.dgid.begin(), r.dgid.end(), p + 8);
  std::copy(r.sgid.begin(), r.sgid.end(), p + 24);
  store_be16(p + 40, r.dlid);
  store_be16(p + 42, r.slid);
  store_be32(p + 44, (r.raw_traffic ? 1u << 31 : 0u) | (r.flow_label & 0xfffff) << 8 | r.hop_limit);
  p[48] = r.tclass;
  p[49] = static_cast<std::uint8_t>((r.reversible ? 0x80 : 0) | (r.numb_path & 0x7f));
  store_be16(p + 50, r.pkey);
  store_be16(p + 52, static_cast<std::uint16_t>((r.qos_class & 0xfff) << 4 | (r.sl & 0xf)));
  p[54] = static_cast<std::uint8_t>((r.mtu_selector & 3) << 6 | (r.mtu & 0x3f));
  p[55] = static_cast<std::uint8_t>((r.rate_selector & 3) << 6 | (r.rate & 0x3f));
  p[56] = static_cast<std::uint8_t>((r.packet_life_time_selector & 3) << 6 | (r.packet_life_time & 0x3f));
  p[57] = r.preference;
  return raw;
}

double rate_gbps(unsigned r) noexcept {
  switch (r) {
    case 2: return 2.5;
    case 3: return 10;
    case 4: return 30;
    case 5: return 5;
    case 6: return 20;
    case 7: return 40;
    case 8: return 60;
    case 9: return 80;
    case 10: return 120;
    case 11: return 14;
    case 12: return 56;
    case 13: return 112;
    case 14: return 168;
    case 15: return 25;
    case 16: return 100;
    case 17: return 200;
    case 18: return 300;
    case 19: return 28;
    case 20: return 50;
    case 21: return 400;
    case 22: return 600;
    default: return 0;
  }
}

}  // namespace fabric
