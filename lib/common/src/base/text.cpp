#include "fabric/base/text.hpp"

#include <fmt/format.h>

namespace fabric {

std::string printable(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f)
      out += c;
    else
      out += fmt::format("\\x{:02x}", b);
  }
  return out;
}

std::string shortened(std::string text, std::size_t most) {
  if (text.size() <= most) return text;
  // The marker's length depends on the count, which depends on the marker:
  // the bytes kept only shrink, so this settles within a few turns.
  std::size_t keep = most;
  std::string marker;
  for (;;) {
    marker = fmt::format(" [{} bytes left out] ", text.size() - keep);
    auto fits = most > marker.size() ? most - marker.size() : 0;
    if (fits == keep) break;
    keep = fits;
  }
  auto head = keep / 2, tail = keep - head;
  return text.substr(0, head) + marker + text.substr(text.size() - tail);
}

std::string counted(std::size_t n, std::string_view one, std::string_view many) {
  if (n == 1) return fmt::format("1 {}", one);
  return many.empty() ? fmt::format("{} {}s", n, one) : fmt::format("{} {}", n, many);
}

}  // namespace fabric
