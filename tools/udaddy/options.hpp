#pragma once
/// udaddy's command line: the options, what the textual ones mean, their
/// checks as a whole, and the options object of the JSON document.

#include "fabric/cli/cli.hpp"
#include "fabric/base/wait_limit.hpp"

#include <nlohmann/json.hpp>

#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <string>

namespace udaddy {

/// Command-line options (the original's short flags, uniform long names).
struct options {
  fabric::cli::output_options out;
  std::string server;              // -s: makes this run the client
  std::string bind;                // -b
  int connections = 1;             // -c
  int count = 10;                  // -C
  int size = 100;                  // -S
  std::string tos;                 // -t as given
  std::optional<fabric::cli::tos_reading> tos_read;  // -t as read, once, when parsed
  std::string port_space_number;   // -p, a number (0x111 udp, 0x2 ipoib)
  std::string port_space;          // -P udp|ipoib
  std::string format = "name";     // -f name|ip|ipv6|gid
  int port = 7174;                 // --port
  fabric::wait_limit timeout{std::chrono::milliseconds(10'000)};  // --timeout
  bool verify = false;             // --verify
  bool stats = false;              // --stats
};

void add_options(CLI::App& app, options& opt);

// What the textual options mean, checked before anything is opened.
struct address_format {
  int flags = 0;
  int family = AF_UNSPEC;
};
/// -f: name, ip, ipv6, gid.
std::optional<address_format> parse_format(const std::string& name);

/// The options in force as the document's options object; text options
/// that were not given are null, numbers are typed.
nlohmann::json options_json(const options& opt);

/// Checks the options as a whole (formats, port space, buffers);
/// throws a usage error.
void validate(const options& opt);

}  // namespace udaddy
