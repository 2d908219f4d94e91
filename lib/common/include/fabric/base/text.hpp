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

/// As printable, for a reader that takes UTF-8 (a page, a CSV file, a
/// report's text): valid UTF-8 stays itself ("caf\u00e9" is café); bytes
/// that are not UTF-8, control characters (C0, DEL and C1) and the marks
/// that reorder or break a line of text (U+061C, U+200E-U+200F,
/// U+2028-U+202E, U+2066-U+2069) are \xNN, each byte. The result is
/// valid UTF-8, and escaping twice changes nothing.
std::string printable_utf8(std::string_view bytes);

/// The length of the valid UTF-8 sequence at the start of `bytes` (1 to
/// 4), 0 when there is none there: a stray, overlong or surrogate byte, a
/// sequence cut off, or no bytes.
std::size_t utf8_sequence(std::string_view bytes) noexcept;

/// The columns a terminal gives UTF-8 text, as fmt counts them when it
/// pads (a wide character two), so that a table of such names lines up.
std::size_t columns(std::string_view utf8);

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
