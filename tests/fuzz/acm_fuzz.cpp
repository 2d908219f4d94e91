// libFuzzer target for what ib_acme reads from outside: ACM replies and the
// host range syntax. The first byte picks the decoder; the rest is its input.
// Every input must end in a result or a fabric::error, never a crash or an
// over-read (built with AddressSanitizer).

#include "fabric/acm/acm_codec.hpp"
#include "fabric/base/error.hpp"
#include "fabric/cli/range.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::span<const std::uint8_t> in(data + 1, size - 1);
  // The transaction id a reply must echo: taken from the reply itself half
  // the time, so that decoding goes past the header checks.
  std::uint64_t tid = 0;
  if (in.size() >= 16 && (data[0] & 0x80)) std::memcpy(&tid, in.data() + 8, 8);
  try {
    switch (data[0] & 0x03) {
      case 0: {
        auto r = fabric::acm::decode_resolve_reply(in, tid);
        for (const auto& e : r.sources) (void)e.text();
        for (const auto& e : r.paths) (void)e.as_path();
        break;
      }
      case 1: (void)fabric::acm::decode_perf_reply(in, tid); break;
      case 2: (void)fabric::acm::decode_ep_reply(in, tid); break;
      default:
        (void)fabric::expand_range(std::string_view(reinterpret_cast<const char*>(in.data()), in.size()));
        break;
    }
  } catch (const fabric::error&) {
  }
  return 0;
}
