#include "fabric/cli/prometheus.hpp"

#include <fmt/format.h>

namespace fabric::cli {

namespace {

std::string label_value(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

void exposition::family(std::string_view name, std::string_view help) {
  text_ += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
}

void exposition::sample_with(std::string_view name, std::span<const label> with, double value) {
  text_ += name;
  if (with.size() > 0) {
    text_ += '{';
    bool first = true;
    for (auto [key, v] : with) {
      text_ += fmt::format("{}{}=\"{}\"", first ? "" : ",", key, label_value(v));
      first = false;
    }
    text_ += '}';
  }
  text_ += fmt::format(" {}\n", value);
}

}  // namespace fabric::cli
