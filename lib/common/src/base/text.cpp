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

std::size_t utf8_sequence(std::string_view b) noexcept {
  if (b.empty()) return 0;
  auto at = [&](std::size_t i) { return static_cast<unsigned char>(b[i]); };
  auto tail = [&](std::size_t i) { return i < b.size() && (at(i) & 0xc0) == 0x80; };
  unsigned char c = at(0);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return tail(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!tail(1) || !tail(2) || (c == 0xe0 && at(1) < 0xa0) || (c == 0xed && at(1) > 0x9f)) return 0;
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!tail(1) || !tail(2) || !tail(3) || (c == 0xf0 && at(1) < 0x90) || (c == 0xf4 && at(1) > 0x8f)) return 0;
    return 4;
  }
  return 0;
}

namespace {

/// A character that controls rather than shows, or reorders the text or
/// breaks its line: its UTF-8 sequence, at most 3 bytes.
bool controls(std::string_view c) {
  auto b = [&](std::size_t i) { return static_cast<unsigned char>(c[i]); };
  if (c.size() == 1) return b(0) < 0x20 || b(0) == 0x7f;
  if (c.size() == 2) return (b(0) == 0xc2 && b(1) <= 0x9f) || (b(0) == 0xd8 && b(1) == 0x9c);
  if (c.size() == 3 && b(0) == 0xe2 && b(1) == 0x80) return b(2) == 0x8e || b(2) == 0x8f || (b(2) >= 0xa8 && b(2) <= 0xae);
  if (c.size() == 3 && b(0) == 0xe2 && b(1) == 0x81) return b(2) >= 0xa6 && b(2) <= 0xa9;
  return false;
}

}  // namespace

std::string printable_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  while (!bytes.empty()) {
    auto n = utf8_sequence(bytes);
    auto shown = n == 0 ? bytes.substr(0, 1) : bytes.substr(0, n);
    if (n == 0 || controls(shown))
      for (char c : shown) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += shown;
    bytes.remove_prefix(shown.size());
  }
  return out;
}

std::size_t columns(std::string_view utf8) {
  // fmt pads to a width by its own count of columns: what it adds to
  // reach the text's byte count is what the text lacks of it.
  return 2 * utf8.size() - fmt::formatted_size("{:<{}}", utf8, utf8.size());
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
