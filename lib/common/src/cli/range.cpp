#include "fabric/cli/range.hpp"

#include "fabric/base/text.hpp"
#include "fabric/base/error.hpp"

#include <fmt/format.h>


namespace fabric {

namespace {

[[noreturn]] void bad_range(std::string_view text, std::string_view why) {
  throw error(exit_code::usage, fmt::format("bad range '{}': {}", printable(text), why));
}

unsigned parse_number(std::string_view text, std::string_view digits) {
  auto v = whole_number<unsigned>(digits);
  if (!v) bad_range(text, fmt::format("'{}' is not a decimal number", printable(digits)));
  return *v;
}

}  // namespace

std::vector<std::string> expand_range(std::string_view text) {
  auto open = text.find('[');
  if (open == std::string_view::npos) return {std::string(text)};
  std::string_view base = text.substr(0, open);
  auto close = text.find(']', open);
  std::string_view list = text.substr(open + 1, close == std::string_view::npos ? std::string_view::npos : close - open - 1);
  // The original takes an empty bracket as no range at all.
  if (list.empty()) return {std::string(base)};

  std::vector<std::string> names;
  while (!list.empty()) {
    auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (item.empty()) continue;  // "1,,3": the original skips empty items
    auto dash = item.find('-');
    std::string_view first = item.substr(0, dash);
    unsigned from = parse_number(text, first);
    unsigned to = dash == std::string_view::npos ? from : parse_number(text, item.substr(dash + 1));
    int width = static_cast<int>(first.size());
    for (unsigned n = from; n <= to; ++n) {
      if (names.size() >= max_range_names) bad_range(text, fmt::format("more than {} names", max_range_names));
      names.push_back(fmt::format("{}{:0{}}", base, n, width));
      if (n == to) break;  // to may be UINT_MAX
    }
  }
  if (names.empty()) bad_range(text, "no names");
  return names;
}

}  // namespace fabric
