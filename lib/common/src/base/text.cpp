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

}  // namespace fabric
