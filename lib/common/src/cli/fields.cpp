#include "fabric/cli/fields.hpp"

namespace fabric::cli {

fields& fields::line(std::string_view head) {
  lines_.push_back({std::string(head), {}});
  return *this;
}

fields& fields::say(std::string_view text, std::string_view joint) {
  append(joint, std::string(text));
  return *this;
}

void fields::append(std::string_view joint, const std::string& text) {
  // Values put before any line still belong to one: the first, unled.
  if (lines_.empty()) lines_.emplace_back();
  auto& body = lines_.back().body;
  if (!body.empty()) body += joint;
  body += text;
}

std::vector<std::string> fields::lines() const {
  std::vector<std::string> out;
  for (const auto& l : lines_)
    if (!l.body.empty()) out.push_back(l.head + l.body);
  return out;
}

}  // namespace fabric::cli
