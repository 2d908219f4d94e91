#pragma once
/// Text that reaches a terminal: bytes from a peer or the user made safe
/// to print.

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace fabric {

/// Bytes from a peer or the user made safe for a terminal: printable
/// ASCII as is, every other byte (control characters, escape sequences,
/// bytes that are not ASCII) as \xNN. Every message that quotes input
/// (options, file and host names, peer data) passes it through this; the
/// result is printable, so escaping twice changes nothing.
std::string printable(std::string_view bytes);

/// A message cut to at most `most` bytes: a longer one keeps its head and
/// its tail and says how much of its middle is left out. An argument may be
/// 128 KiB, and a message that quotes it must stay one line to read.
std::string shortened(std::string text, std::size_t most = 1024);

/// A count and its noun, "1 line", "3 lines": the noun's plural is
/// `many`, by default the noun and an s.
std::string counted(std::size_t n, std::string_view one, std::string_view many = {});

/// A whole number in decimal digits and nothing else (no sign, no space,
/// nothing after it) that `Int` holds; nullopt for any other text.
template <class Int>
std::optional<Int> whole_number(std::string_view text) noexcept {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  Int v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace fabric
