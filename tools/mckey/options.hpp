#pragma once
/// mckey's command line: the options, their checks as a whole, and the
/// options object of the JSON document.

#include "fabric/cli/cli.hpp"
#include "fabric/base/wait_limit.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace mckey {

/// Command-line options (the original's short flags, uniform long names).
struct options {
  fabric::cli::output_options out;
  std::string group;               // -m: IP multicast address
  std::string unmapped_group;      // -M: AF_IB MGID, needs -b
  bool sender = false;             // -s
  std::string bind;                // -b
  int connections = 1;             // -c: QPs
  int count = 10;                  // -C
  int size = 100;                  // -S
  std::string port_space_number;   // -p: 0x111 udp, 0x2 ipoib
  bool send_only = false;          // -o
  bool no_loopback = false;        // -l
  fabric::wait_limit timeout{std::chrono::milliseconds(10'000)};  // --timeout
  int delay_ms = 3'000;            // --delay: sender's pause after joining, as the original's
  bool verify = false;             // --verify
  bool stats = false;              // --stats
};

void add_options(CLI::App& app, options& opt);

/// Checks the options as a whole (the group, the port space); throws a
/// usage error.
void validate(const options& opt);

/// The options in force as the document's options object.
nlohmann::json options_json(const options& opt);

}  // namespace mckey
