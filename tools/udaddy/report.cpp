// Options, report and their two renderings; no I/O here.
#include "udaddy.hpp"

#include "fabric/completion.hpp"
#include "fabric/stats.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <strings.h>

namespace udaddy {

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

std::optional<double> report::messages_per_second() const noexcept {
  if (!elapsed_ms || *elapsed_ms <= 0) return std::nullopt;
  auto t = totals();
  return static_cast<double>(t.sent + t.received) * 1000.0 / *elapsed_ms;
}

void to_json(nlohmann::json& j, const report& r) {
  j["role"] = r.role;
  if (r.role == "none") return;  // stopped before the options were understood
  if (!r.server.empty()) j["server"] = r.server;
  if (!r.bind.empty()) j["bind"] = r.bind;
  j["port"] = r.port;
  j["port_space"] = r.port_space;
  j["connections"] = r.connections;
  j["count"] = r.count;
  j["size"] = r.size;
  if (r.tos) j["tos"] = *r.tos;
  j["timeout"] = r.timeout_ms;
  j["verify"] = r.verify;
  if (r.mtu) j["mtu"] = *r.mtu;

  fabric::ud_counts_shown shown{.sent = true, .received = true, .verify = r.verify};
  std::vector<double> setup;
  auto& results = j["results"] = nlohmann::json::array();
  for (const auto& c : r.results) {
    nlohmann::json e;
    fabric::to_json(e, c, shown);
    if (c.connect_ms) {
      e["connect_ms"] = *c.connect_ms;
      setup.push_back(*c.connect_ms * 1000.0);
    }
    results.push_back(std::move(e));
  }
  fabric::add_totals(j, r.totals(), shown);
  if (r.elapsed_ms) j["elapsed_ms"] = *r.elapsed_ms;
  if (auto rate = r.messages_per_second()) j["messages_per_second"] = *rate;
  if (!setup.empty()) j["connect_us"] = fabric::summarize(setup);
}

std::vector<std::string> loss_lines(const report& r) {
  return fabric::loss_lines("udaddy: connection", "connected", r.results);
}

std::vector<std::string> stats_lines(const report& r) {
  std::vector<std::string> lines;
  auto t = r.totals();
  lines.push_back(fmt::format("udaddy: {} connections, sent {}, received {} of {}, lost {}", r.results.size(), t.sent,
                              t.received, t.expected, t.lost));
  if (auto rate = r.messages_per_second())
    lines.push_back(fmt::format("udaddy: data phase {:.3f} ms, {:.0f} messages/s", *r.elapsed_ms, *rate));
  std::vector<double> setup;
  for (const auto& c : r.results)
    if (c.connect_ms) setup.push_back(*c.connect_ms * 1000.0);
  if (!setup.empty()) lines.push_back("udaddy: connect " + fabric::format_summary(fabric::summarize(setup)));
  return lines;
}

std::pair<fabric::exit_code, std::string> verdict(const report& r) {
  std::size_t connected = 0;
  for (const auto& c : r.results) connected += c.state == "connected";
  if (connected < static_cast<std::size_t>(r.connections))
    return {fabric::exit_code::test_failed,
            fmt::format("{} of {} connections arrived", connected, r.connections)};
  return fabric::loss_verdict(r.totals());
}

}  // namespace udaddy
