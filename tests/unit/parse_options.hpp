#pragma once
/// Parses a tool's command line in a unit test as the tool does: its own
/// options (found next to `Options`) and -j/--json.

#include "fabric/cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

template <class Options>
Options parse_options(std::vector<std::string> args) {
  CLI::App app;
  Options opt;
  fabric::cli::add_output_options(app, opt.out);
  add_options(app, opt);
  // CLI11 takes a vector of arguments last first.
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return opt;
}
