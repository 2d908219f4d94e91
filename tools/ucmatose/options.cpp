// The command line: declared, checked as a whole, rendered for the document.
#include "options.hpp"

#include "fabric/cli/completion.hpp"
#include "fabric/cli/json_values.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace ucmatose {

using fabric::text_or_null;

void add_options(CLI::App& app, options& opt) {
  app.add_option("-s,--server", opt.server, "Server address: run as the client and connect to it")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_option("-b,--bind", opt.bind, "Local address to bind to")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-f,--format", opt.format, "Address format: name, ip, ipv6 or gid")
      ->check(CLI::IsMember({"name", "ip", "ipv6", "gid"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_option("-P,--port-space", opt.port_space, "rdma_cm port space: tcp or ib")
      ->check(CLI::IsMember({"tcp", "ib"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_option("-c,--connections", opt.connections, "Connections to set up at once")
      ->transform(fabric::cli::decimal(1, 65536))
      ->capture_default_str();
  app.add_option("-C,--count", opt.count, "Messages each way per connection")
      ->transform(fabric::cli::decimal(0, 1 << 20))
      ->capture_default_str();
  app.add_option("-S,--size", opt.size, "Message size in bytes (0: no messages)")
      ->transform(fabric::cli::decimal(0, 1 << 30))
      ->capture_default_str();
  fabric::cli::add_tos_option(app, "Type of service of the client's connections (0-255)",
                              [&opt](const std::string&, fabric::cli::tos_reading read) {
                                opt.tos = read.value;
                                opt.warnings.clear();
                                if (!read.warning.empty()) opt.warnings.push_back(std::move(read.warning));
                              });
  app.add_option("-p,--port", opt.port, "rdma_cm port number")->transform(fabric::cli::decimal(0, 65535))->capture_default_str();
  app.add_option("-a,--ack-timeout", opt.ack_timeout, "Local ACK timeout exponent (4.096 us x 2^N)")
      ->transform(fabric::cli::c_number(0, 31));
  app.add_flag("-m,--migrate", opt.migrate, "Move every id to a new event channel before disconnecting");
  fabric::cli::add_timeout_option(app, opt.timeout);
  app.add_flag("--verify", opt.verify, "Fill payloads with a pattern and check every message received");
  app.add_flag("--stats", opt.stats, "Print step timings, connection rate and message counts");
}

void validate(const options& opt) {
  // One send slot per message; with --verify also one receive slot per
  // message of every connection.
  auto total = static_cast<double>(opt.messages()) * opt.size * (opt.verify ? opt.connections + 1.0 : 1.0) + opt.size;
  if (total > static_cast<double>(1ULL << 31))
    fabric::cli::usage_error(fmt::format("-C {} x -S {}{} needs {:.0f} MiB of buffers; the limit is 2048 MiB",
                                         opt.count, opt.size,
                                         opt.verify ? fmt::format(" x -c {} (--verify)", opt.connections) : "",
                                         total / (1 << 20)));
}

nlohmann::json options_json(const options& o) {
  auto optional_int = [](const auto& v) { return v ? nlohmann::json(static_cast<int>(*v)) : nlohmann::json(nullptr); };
  return {{"server", text_or_null(o.server)},
          {"bind", text_or_null(o.bind)},
          {"format", o.format},
          {"port_space", o.port_space},
          {"connections", o.connections},
          {"count", o.count},
          {"size", o.size},
          {"tos", optional_int(o.tos)},
          {"port", o.port},
          {"ack_timeout", optional_int(o.ack_timeout)},
          {"migrate", o.migrate},
          {"timeout", o.timeout.ms()},
          {"verify", o.verify},
          {"stats", o.stats}};
}

fabric::addr_query address_query(const options& o, const std::string& node, int extra_flags) {
  fabric::addr_query q;
  q.node = node;
  q.service = std::to_string(o.port);
  q.flags = extra_flags;
  q.port_space = o.port_space == "ib" || o.port_space == "IB" ? RDMA_PS_IB : RDMA_PS_TCP;
  q.qp_type = 0;
  q.lookup_timeout = o.timeout.each();
  std::string f = o.format;
  std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (f == "ip" || f == "ipv6") q.flags |= RAI_NUMERICHOST;
  if (f == "gid") {
    q.flags |= RAI_NUMERICHOST | RAI_FAMILY;
    q.family = AF_IB;
  }
  return q;
}

}  // namespace ucmatose
