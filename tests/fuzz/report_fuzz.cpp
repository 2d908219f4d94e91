// libFuzzer target for what the tools print of bytes they do not control:
// peer data, peer and service names, arguments. Whatever the bytes, a JSON
// document or line must come out as one valid UTF-8 document (bytes that
// are not UTF-8 replaced, nothing dropped but them, no exception), and
// human output of peer bytes must be printable ASCII.

#include "fabric/cli/console.hpp"
#include "rping/rping.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // Two strings from one input: a peer name and an error.
  auto cut = bytes.find('\0');
  std::string first(bytes.substr(0, cut));
  std::string second(cut == std::string_view::npos ? std::string_view{} : bytes.substr(cut + 1));

  rping::options o;
  o.addr = first;
  rping::report r;
  auto& c = r.connections.emplace_back();
  c.peer = first;
  c.error = second;
  c.rtt.add(static_cast<double>(size));
  nlohmann::json doc;
  rping::to_json(doc, o, r);
  doc["error"] = second;

  for (int indent : {-1, 2}) {
    std::string text = fabric::dump_json(doc, indent);
    if (indent < 0 && text.find('\n') != std::string::npos) __builtin_trap();  // a line is one line
    auto back = nlohmann::json::parse(text, nullptr, false);  // strict: rejects invalid UTF-8
    if (back.is_discarded()) __builtin_trap();
  }
  for (char ch : fabric::printable(bytes))
    if (ch < 0x20 || ch >= 0x7f) __builtin_trap();
  return 0;
}
