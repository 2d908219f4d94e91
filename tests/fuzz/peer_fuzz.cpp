// libFuzzer target for the bytes a peer puts on the wire: rping's buffer
// adverts and ping data, and the payload checks of udaddy, mckey and
// ucmatose. The first byte picks the decoder; the rest is what arrived.
// Built with AddressSanitizer: any over-read or UB is a finding.

#include "fabric/flows/payload.hpp"
#include "ucmatose/payload.hpp"
#include "rping/protocol.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  // A copy of exactly the received length, so that ASan sees any read past it.
  std::vector<std::byte> in(size - 1);
  if (!in.empty()) std::memcpy(in.data(), data + 1, in.size());
  std::span<const std::byte> msg(in);
  switch (data[0] % 4) {
    case 0: {
      auto info = rping::decode(msg);
      if (info) {
        auto again = rping::decode(rping::encode(*info));
        if (!again || !(*again == *info)) __builtin_trap();  // the codec must round-trip
      }
      break;
    }
    case 1: (void)rping::ping_text(msg); break;
    case 2: {
      auto seq = fabric::check_payload(msg);
      if (seq) {
        std::vector<std::byte> expect(in.size());
        fabric::fill_payload(expect, *seq);
        if (expect != in) __builtin_trap();  // accepted means exactly the pattern
      }
      break;
    }
    default: {
      std::uint32_t seq = 0;
      if (in.size() >= 4) std::memcpy(&seq, in.data(), 4);
      (void)ucmatose::check_payload(msg, seq);
      break;
    }
  }
  return 0;
}
