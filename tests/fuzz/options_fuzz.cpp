// libFuzzer target for what users type: the numeric and port-space syntax
// the originals read with strtoul and prefix matches, and each datagram
// tool's whole command line (NUL-separated arguments) through its option
// table and usage checks. A bad command line must end in a CLI11 or
// fabric::error, never a crash.

#include "fabric/cli/console.hpp"
#include "fabric/base/error.hpp"
#include "fabric/cm/ud.hpp"
#include "mckey/mckey.hpp"
#include "udaddy/udaddy.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

std::vector<std::string> split_args(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0)
      args.emplace_back();
    else
      args.back().push_back(static_cast<char>(data[i]));
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  return args;
}

template <class Options>
void parse_tool(std::vector<std::string> args) {
  CLI::App app;
  Options opt;
  fabric::cli::add_output_options(app, opt.out);
  if constexpr (std::is_same_v<Options, udaddy::options>)
    udaddy::add_options(app, opt);
  else
    mckey::add_options(app, opt);
  try {
    app.parse(args);
  } catch (const CLI::Error&) {
    return;
  }
  // A command line that parsed is checked as a whole and rendered.
  if constexpr (std::is_same_v<Options, mckey::options>) {
    mckey::validate(opt);
    (void)fabric::dump_json(mckey::options_json(opt));
  } else {
    udaddy::validate(opt);
    (void)fabric::dump_json(udaddy::options_json(opt));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t* rest = data + 1;
  std::size_t n = size - 1;
  std::string text(reinterpret_cast<const char*>(rest), n);
  try {
    switch (data[0] % 4) {
      case 0: (void)fabric::parse_number(text, data[0] & 0x80 ? 0xffff : 0xffffffffUL); break;
      case 1: {
        auto split = text.find('\0');
        auto ps = fabric::parse_port_space(text.substr(0, split), split == std::string::npos ? "" : text.substr(split + 1));
        if (ps) (void)fabric::port_space_name(*ps);
        break;
      }
      case 2: parse_tool<udaddy::options>(split_args(rest, n)); break;
      default: parse_tool<mckey::options>(split_args(rest, n)); break;
    }
  } catch (const fabric::error&) {
  }
  return 0;
}
