// Options, report and their renderings; no I/O here.
#include "mckey.hpp"

#include "fabric/completion.hpp"
#include "fabric/stats.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mckey {

void add_options(CLI::App& app, options& opt) {
  app.add_option("-m,--group", opt.group, "IP multicast address of the group to join")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-M,--unmapped-group", opt.unmapped_group,
                 "Unmapped multicast GID (AF_IB) to join instead of -m; needs -b and InfiniBand");
  app.add_flag("-s,--sender", opt.sender, "Send to the group (default: receive)");
  app.add_option("-b,--bind", opt.bind, "Local address to bind to")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-c,--connections", opt.connections, "Number of QPs joining the group")
      ->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("-C,--count", opt.count, "Messages each QP sends, or expects to receive")
      ->check(CLI::Range(0, 1 << 30))->capture_default_str();
  app.add_option("-S,--size", opt.size, "Message size in bytes; must fit the MTU")
      ->check(CLI::Range(0, 1 << 20))->capture_default_str();
  app.add_option("-p,--port-space-number", opt.port_space_number,
                 "Port space as a number: 0x111 for UDP (default), 0x2 for IPoIB")
      ->type_name("0x111|0x2");
  app.add_flag("-o,--send-only", opt.send_only, "Join as a send-only full member");
  app.add_flag("-l,--no-loopback", opt.no_loopback, "Block multicast loopback to the QP's own group (where supported)");
  fabric::cli::add_timeout_option(app, opt.timeout_ms,
                                  "Longest wait in ms without progress (join, datagrams) before giving up");
  app.add_option("--delay", opt.delay_ms, "Sender: pause in ms after joining before sending (as the original, 3000)")
      ->check(CLI::Range(0, 3'600'000))->capture_default_str();
  app.add_flag("--verify", opt.verify, "Receiver: check the payload pattern of every message (our sender)");
  app.add_flag("--stats", opt.stats, "Print join times and counts");
}

std::optional<std::string> usage_problem(const options& opt) {
  if (!opt.group.empty() && !opt.unmapped_group.empty()) return "-m and -M are mutually exclusive";
  if (opt.group.empty() && opt.unmapped_group.empty()) return "a multicast group is required: -m ADDRESS or -M GID";
  if (!opt.unmapped_group.empty() && opt.bind.empty()) return "-M needs -b: an unmapped multicast address needs a source address";
  return std::nullopt;
}

void to_json(nlohmann::json& j, const report& r) {
  j["role"] = r.role;
  if (r.role == "none") return;  // stopped before the options were understood
  j[r.unmapped ? "unmapped_group" : "group"] = r.group;
  if (!r.bind.empty()) j["bind"] = r.bind;
  j["connections"] = r.connections;
  j["count"] = r.count;
  j["size"] = r.size;
  j["port_space"] = r.port_space;
  j["send_only"] = r.send_only;
  j["no_loopback"] = r.no_loopback;
  j["timeout"] = r.timeout_ms;
  j["verify"] = r.verify;
  if (r.mtu) j["mtu"] = *r.mtu;
  if (!r.link_layer.empty()) j["link_layer"] = r.link_layer;
  if (!r.loopback_note.empty()) j["loopback_note"] = r.loopback_note;

  // A sender's QPs receive nothing, a receiver's send nothing.
  bool sender = r.role == "sender";
  fabric::ud_counts_shown shown{.sent = sender, .received = !sender, .verify = !sender && r.verify};
  std::vector<double> joins;
  auto& results = j["results"] = nlohmann::json::array();
  for (const auto& q : r.results) {
    nlohmann::json e;
    fabric::to_json(e, q, shown);
    if (q.dgid) e["dgid"] = *q.dgid;
    if (q.mlid) e["mlid"] = *q.mlid;
    if (q.sl) e["sl"] = *q.sl;
    if (q.join_ms) {
      e["join_ms"] = *q.join_ms;
      joins.push_back(*q.join_ms * 1000.0);
    }
    if (q.loopback_blocked) e["loopback_blocked"] = *q.loopback_blocked;
    results.push_back(std::move(e));
  }
  fabric::add_totals(j, r.totals(), shown);
  if (r.elapsed_ms) j["elapsed_ms"] = *r.elapsed_ms;
  if (!joins.empty()) j["join_us"] = fabric::summarize(joins);
}

std::string joined_line(const qp_result& q) {
  return fmt::format("mckey: joined dgid: {} mlid 0x{:x} sl {}", q.dgid.value_or(""), q.mlid.value_or(0),
                     static_cast<int>(q.sl.value_or(0)));
}

std::vector<std::string> loss_lines(const report& r) { return fabric::loss_lines("mckey: qp", "joined", r.results); }

std::vector<std::string> stats_lines(const report& r) {
  std::vector<std::string> lines;
  auto t = r.totals();
  if (r.role == "sender")
    lines.push_back(fmt::format("mckey: {} QPs, sent {}", r.results.size(), t.sent));
  else
    lines.push_back(fmt::format("mckey: {} QPs, received {} of {}, lost {}", r.results.size(), t.received, t.expected,
                                t.lost));
  std::vector<double> joins;
  for (const auto& q : r.results)
    if (q.join_ms) joins.push_back(*q.join_ms * 1000.0);
  if (!joins.empty()) lines.push_back("mckey: join " + fabric::format_summary(fabric::summarize(joins)));
  return lines;
}

std::pair<fabric::exit_code, std::string> verdict(const report& r) { return fabric::loss_verdict(r.totals()); }

}  // namespace mckey
