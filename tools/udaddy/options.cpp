// The command line: the options, their checks as a whole, and the options
// object of the JSON document.
#include "options.hpp"

#include "fabric/cli/completion.hpp"
#include "fabric/cli/json_values.hpp"
#include "fabric/cm/ud.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <strings.h>

namespace udaddy {

using fabric::text_or_null;

void add_options(CLI::App& app, options& opt) {
  app.add_option("-s,--server", opt.server, "Server address: run as the client and connect to it")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_option("-b,--bind", opt.bind, "Local address to bind to")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-c,--connections", opt.connections, "Number of connections")
      ->transform(fabric::cli::decimal(1, 65536))->capture_default_str();
  app.add_option("-C,--count", opt.count, "Messages each way per connection")
      ->transform(fabric::cli::decimal(0, 1 << 30))->capture_default_str();
  app.add_option("-S,--size", opt.size, "Message size in bytes; must fit the path MTU")
      ->transform(fabric::cli::decimal(0, 1 << 20))->capture_default_str();
  fabric::cli::add_tos_option(app, "Type of service (client), decimal or 0x hex",
                              [&opt](const std::string& text, fabric::cli::tos_reading read) {
                                opt.tos = text;
                                opt.tos_read = std::move(read);
                              });
  app.add_option("-p,--port-space-number", opt.port_space_number,
                 "Port space as a number: 0x111 for UDP (default), 0x2 for IPoIB")
      ->type_name("0x111|0x2");
  app.add_option("-P,--port-space", opt.port_space, "Port space: udp (default) or ipoib")->type_name("udp|ipoib");
  app.add_option("-f,--format", opt.format, "Address format: name, ip, ipv6 or gid")
      ->type_name("name|ip|ipv6|gid")
      ->capture_default_str();
  app.add_option("--port", opt.port, "rdma_cm port number")->transform(fabric::cli::decimal(1, 65535))->capture_default_str();
  fabric::cli::add_timeout_option(app, opt.timeout);
  app.add_flag("--verify", opt.verify, "Check the payload pattern of every message received (both sides ours)");
  app.add_flag("--stats", opt.stats, "Print counts, message rate and connection setup times");
}

std::optional<address_format> parse_format(const std::string& name) {
  if (strncasecmp(name.c_str(), "ip", 2) == 0) return address_format{RAI_NUMERICHOST, AF_UNSPEC};
  if (strncasecmp(name.c_str(), "gid", 3) == 0) return address_format{RAI_NUMERICHOST | RAI_FAMILY, AF_IB};
  if (strncasecmp(name.c_str(), "name", 4) == 0) return address_format{};
  return std::nullopt;
}

void validate(const options& o) {
  if (!parse_format(o.format))
    fabric::cli::usage_error(fmt::format("-f {}: unknown address format (name, ip, ipv6, gid)", fabric::printable(o.format)));
  if (!fabric::parse_port_space(o.port_space, o.port_space_number))
    fabric::cli::usage_error(
        o.port_space.empty()
            ? fmt::format("-p {}: unknown port space (0x111 udp, 0x2 ipoib)", fabric::printable(o.port_space_number))
            : fmt::format("-P {}: unknown port space (udp, ipoib)", fabric::printable(o.port_space)));
  // Every QP has at least one send and one receive slot, whatever the device.
  fabric::ud_config least;
  least.size = static_cast<std::uint32_t>(o.size);
  fabric::check_buffer_budget(least, static_cast<std::uint64_t>(o.connections));
}

nlohmann::json options_json(const options& o) {
  auto ps = fabric::parse_port_space(o.port_space, o.port_space_number);
  return {{"server", text_or_null(o.server)},
          {"bind", text_or_null(o.bind)},
          {"connections", o.connections},
          {"count", o.count},
          {"size", o.size},
          {"tos", o.tos_read ? nlohmann::json(o.tos_read->value) : nlohmann::json(nullptr)},
          {"port_space_number", ps ? nlohmann::json(static_cast<int>(*ps)) : nlohmann::json(nullptr)},
          {"port_space", ps ? nlohmann::json(fabric::port_space_name(*ps)) : nlohmann::json(nullptr)},
          {"format", o.format},
          {"port", o.port},
          {"timeout", o.timeout.ms()},
          {"verify", o.verify},
          {"stats", o.stats}};
}

}  // namespace udaddy
