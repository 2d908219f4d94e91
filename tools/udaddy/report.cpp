// Options, their checks, the report and its renderings; no I/O here.
#include "udaddy.hpp"

#include "fabric/cli/completion.hpp"
#include "fabric/cli/json_values.hpp"
#include "fabric/cm/ud.hpp"

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
      ->check(CLI::Range(1, 65536))->capture_default_str();
  app.add_option("-C,--count", opt.count, "Messages each way per connection")
      ->check(CLI::Range(0, 1 << 30))->capture_default_str();
  app.add_option("-S,--size", opt.size, "Message size in bytes; must fit the path MTU")
      ->check(CLI::Range(0, 1 << 20))->capture_default_str();
  app.add_option("-t,--tos", opt.tos, "Type of service (client), decimal or 0x hex");
  app.add_option("-p,--port-space-number", opt.port_space_number,
                 "Port space as a number: 0x111 for UDP (default), 0x2 for IPoIB")
      ->type_name("0x111|0x2");
  app.add_option("-P,--port-space", opt.port_space, "Port space: udp (default) or ipoib")->type_name("udp|ipoib");
  app.add_option("-f,--format", opt.format, "Address format: name, ip, ipv6 or gid")
      ->type_name("name|ip|ipv6|gid")
      ->capture_default_str();
  app.add_option("--port", opt.port, "rdma_cm port number")->check(CLI::Range(1, 65535))->capture_default_str();
  fabric::cli::add_timeout_option(app, opt.timeout_ms,
                                  "Longest wait in ms without progress (connection, datagram) before giving up");
  app.add_flag("--verify", opt.verify, "Check the payload pattern of every message received (both sides ours)");
  app.add_flag("--stats", opt.stats, "Print counts, message rate and connection setup times");
}

std::optional<address_format> parse_format(const std::string& name) {
  if (strncasecmp(name.c_str(), "ip", 2) == 0) return address_format{RAI_NUMERICHOST, AF_UNSPEC};
  if (strncasecmp(name.c_str(), "gid", 3) == 0) return address_format{RAI_NUMERICHOST | RAI_FAMILY, AF_IB};
  if (strncasecmp(name.c_str(), "name", 4) == 0) return address_format{};
  return std::nullopt;
}

namespace {
}  // namespace

void validate(const options& o) {
  if (!parse_format(o.format))
    fabric::cli::usage_error(fmt::format("-f {}: unknown address format (name, ip, ipv6, gid)", fabric::printable(o.format)));
  if (!fabric::parse_port_space(o.port_space, o.port_space_number))
    fabric::cli::usage_error(
        o.port_space.empty()
            ? fmt::format("-p {}: unknown port space (0x111 udp, 0x2 ipoib)", fabric::printable(o.port_space_number))
            : fmt::format("-P {}: unknown port space (udp, ipoib)", fabric::printable(o.port_space)));
  if (!o.tos.empty()) (void)fabric::cli::read_tos(o.tos);
  // Every QP has at least one send and one receive slot, whatever the device.
  fabric::ud_config least;
  least.size = static_cast<std::uint32_t>(o.size);
  fabric::check_buffer_budget(least, static_cast<std::uint64_t>(o.connections));
}

nlohmann::json options_json(const options& o) {
  auto ps = fabric::parse_port_space(o.port_space, o.port_space_number);
  std::optional<int> tos;
  try {
    if (!o.tos.empty()) tos = fabric::cli::read_tos(o.tos).value;
  } catch (const fabric::error&) {
    // Not a type of service: the usage error says so.
  }
  return {{"server", text_or_null(o.server)},
          {"bind", text_or_null(o.bind)},
          {"connections", o.connections},
          {"count", o.count},
          {"size", o.size},
          {"tos", fabric::value_or_null(tos)},
          {"port_space_number", ps ? nlohmann::json(static_cast<int>(*ps)) : nlohmann::json(nullptr)},
          {"port_space", ps ? nlohmann::json(fabric::port_space_name(*ps)) : nlohmann::json(nullptr)},
          {"format", o.format},
          {"port", o.port},
          {"timeout", o.timeout_ms},
          {"verify", o.verify},
          {"stats", o.stats}};
}

nlohmann::json result_json(const connection_result& c) {
  auto j = fabric::result_json("connection", "connected", "connect_us", c);
  j["strangers"] = c.strangers;
  return j;
}

void to_json(nlohmann::json& j, const options& o, const report& r) {
  j["role"] = r.role;
  j["options"] = options_json(o);
  auto& results = j["results"] = nlohmann::json::array();
  for (const auto& c : r.results) results.push_back(result_json(c));
  auto summary = fabric::summary_json("connections", "connect", r.results.size(), r.totals(), r.elapsed_us);
  summary["mtu"] = fabric::value_or_null(r.mtu);
  j["summary"] = std::move(summary);
}

std::vector<std::string> loss_lines(const report& r) {
  return fabric::loss_lines("udaddy: connection", "connected", r.results);
}

std::vector<std::string> stats_lines(const report& r, int expected_connections) {
  std::vector<std::string> lines;
  auto t = r.totals();
  lines.push_back(fmt::format("udaddy: {} of {} connections, sent {}, received {} of {}, lost {}", r.results.size(),
                              expected_connections, t.sent, t.received, t.expected, t.lost));
  if (r.elapsed_us && *r.elapsed_us > 0)
    lines.push_back(fmt::format("udaddy: data phase {:.3f} ms, {:.0f} messages/s", *r.elapsed_us / 1000.0,
                                static_cast<double>(t.sent + t.received) * 1e6 / *r.elapsed_us));
  if (t.setup.count() > 0) lines.push_back("udaddy: connect " + fabric::format_summary(t.setup.summary()));
  return lines;
}

fabric::verdict judge(const report& r, int expected_connections) {
  std::size_t connected = 0;
  for (const auto& c : r.results) connected += c.state == "connected";
  if (connected < static_cast<std::size_t>(expected_connections))
    return {fabric::exit_code::test_failed, fmt::format("{} of {} connections arrived", connected, expected_connections)};
  return fabric::loss_verdict(r.totals());
}

}  // namespace udaddy
