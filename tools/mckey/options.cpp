// The command line: the options, their checks as a whole, and the options
// object of the JSON document.
#include "options.hpp"

#include "fabric/cli/completion.hpp"
#include "fabric/cli/json_values.hpp"
#include "fabric/cm/ud.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mckey {

using fabric::text_or_null;

void add_options(CLI::App& app, options& opt) {
  app.add_option("-m,--group", opt.group, "IP multicast address of the group to join")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-M,--unmapped-group", opt.unmapped_group,
                 "Unmapped multicast GID (AF_IB) to join instead of -m; needs -b and InfiniBand");
  app.add_flag("-s,--sender", opt.sender, "Send to the group (default: receive)");
  app.add_option("-b,--bind", opt.bind, "Local address to bind to")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-c,--connections", opt.connections, "Number of QPs joining the group")
      ->transform(fabric::cli::decimal(1, 1024))->capture_default_str();
  app.add_option("-C,--count", opt.count, "Messages each QP sends, or expects to receive")
      ->transform(fabric::cli::decimal(0, 1 << 30))->capture_default_str();
  app.add_option("-S,--size", opt.size, "Message size in bytes; must fit the MTU")
      ->transform(fabric::cli::decimal(0, 1 << 20))->capture_default_str();
  app.add_option("-p,--port-space-number", opt.port_space_number,
                 "Port space as a number: 0x111 for UDP (default), 0x2 for IPoIB")
      ->type_name("0x111|0x2");
  app.add_flag("-o,--send-only", opt.send_only, "Join as a send-only full member");
  app.add_flag("-l,--no-loopback", opt.no_loopback, "Block multicast loopback to the QP's own group (where supported)");
  fabric::cli::add_timeout_option(app, opt.timeout);
  app.add_option("--delay", opt.delay_ms, "Sender: pause in ms after joining before sending (as the original, 3000)")
      ->transform(fabric::cli::decimal(0, 3'600'000))->capture_default_str();
  app.add_flag("--verify", opt.verify, "Receiver: check the payload pattern of every message (our sender)");
  app.add_flag("--stats", opt.stats, "Print join times and counts");
}

void validate(const options& o) {
  if (!o.group.empty() && !o.unmapped_group.empty()) fabric::cli::usage_error("-m and -M are mutually exclusive");
  if (o.group.empty() && o.unmapped_group.empty())
    fabric::cli::usage_error("a multicast group is required: -m ADDRESS or -M GID");
  if (!o.unmapped_group.empty() && o.bind.empty())
    fabric::cli::usage_error("-M needs -b: an unmapped multicast address needs a source address");
  if (!fabric::parse_port_space("", o.port_space_number))
    fabric::cli::usage_error(fmt::format("-p {}: unknown port space (0x111 udp, 0x2 ipoib)", fabric::printable(o.port_space_number)));
  // Every QP has at least one send and one receive slot, whatever the device.
  fabric::ud_config least;
  least.size = static_cast<std::uint32_t>(o.size);
  fabric::check_buffer_budget(least, static_cast<std::uint64_t>(o.connections));
}

nlohmann::json options_json(const options& o) {
  auto ps = fabric::parse_port_space("", o.port_space_number);
  return {{"group", text_or_null(o.group)},
          {"unmapped_group", text_or_null(o.unmapped_group)},
          {"sender", o.sender},
          {"bind", text_or_null(o.bind)},
          {"connections", o.connections},
          {"count", o.count},
          {"size", o.size},
          {"port_space_number", ps ? nlohmann::json(static_cast<int>(*ps)) : nlohmann::json(nullptr)},
          {"send_only", o.send_only},
          {"no_loopback", o.no_loopback},
          {"timeout", o.timeout.ms()},
          {"delay", o.delay_ms},
          {"verify", o.verify},
          {"stats", o.stats}};
}

}  // namespace mckey
