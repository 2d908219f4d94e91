#include "fabric/cli/hostlist.hpp"

#include "fabric/base/text.hpp"
#include "fabric/base/error.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fabric {

namespace {

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  // A host list can be long: the error line quotes its start.
  constexpr std::size_t quoted = 80;
  auto shown = printable(text.substr(0, quoted));
  throw error(exit_code::usage,
              fmt::format("host list '{}{}': {}", shown, text.size() > quoted ? "..." : "", why));
}

/// The names of one bracket's ranges: "01-03,7" gives 01 02 03 7; more
/// than `room` of them is refused before they are made.
std::vector<std::string> expand_ranges(std::string_view whole, std::string_view ranges, std::size_t room) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= ranges.size()) {
    auto comma = ranges.find(',', start);
    auto item = ranges.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    auto dash = item.find('-');
    auto lo_text = item.substr(0, dash);
    auto hi_text = dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
    auto lo = whole_number<unsigned long>(lo_text), hi = whole_number<unsigned long>(hi_text);
    if (!lo || !hi || *hi < *lo) bad(whole, fmt::format("'{}' is not N or N-M with N <= M", printable(item)));
    if (*hi - *lo >= room - std::min(room, out.size())) bad(whole, "more names than a host list may hold");
    for (auto v = *lo; v <= *hi; ++v) out.push_back(fmt::format("{:0{}}", v, lo_text.size()));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view text) {
  std::vector<std::string> names;
  std::size_t i = 0;
  while (i < text.size()) {
    // One item: text up to a comma outside brackets.
    std::vector<std::string> partial{""};
    while (i < text.size() && text[i] != ',') {
      if (text[i] == ']') bad(text, "a ']' without its '['");
      if (text[i] != '[') {
        auto next = text.find_first_of("[],", i);
        auto plain = text.substr(i, next == std::string_view::npos ? std::string_view::npos : next - i);
        for (auto& p : partial) p += plain;
        i += plain.size();
        continue;
      }
      auto close = text.find(']', i);
      if (close == std::string_view::npos) bad(text, "a '[' without its ']'");
      auto inner = text.substr(i + 1, close - i - 1);
      if (inner.find('[') != std::string_view::npos) bad(text, "brackets inside brackets");
      // Each bracket multiplies the names so far: it may add no more than
      // the room they leave.
      auto values = expand_ranges(text, inner, (max_hostlist_names - std::min(max_hostlist_names, names.size())) / partial.size());
      if (partial.size() * values.size() > max_hostlist_names) bad(text, "more names than a host list may hold");
      std::vector<std::string> grown;
      grown.reserve(partial.size() * values.size());
      for (const auto& p : partial)
        for (const auto& v : values) grown.push_back(p + v);
      partial = std::move(grown);
      i = close + 1;
    }
    if (partial.size() == 1 && partial.front().empty()) bad(text, "an empty name");
    for (auto& p : partial) {
      // Host names are printable ASCII: a control byte or a space in one
      // would reach every line that names the host.
      if (std::any_of(p.begin(), p.end(), [](char c) { return c <= ' ' || c >= 0x7f; }))
        bad(text, "a byte that no host name has");
      names.push_back(std::move(p));
    }
    if (names.size() > max_hostlist_names) bad(text, "more names than a host list may hold");
    if (i < text.size()) {
      ++i;  // the comma
      if (i == text.size()) bad(text, "an empty name");
    }
  }
  if (names.empty()) bad(text, "no names");
  return names;
}

}  // namespace fabric
