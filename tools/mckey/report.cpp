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

std::uint64_t report::total(std::uint64_t qp_result::*field) const noexcept {
  std::uint64_t n = 0;
  for (const auto& q : results) n += q.*field;
  return n;
}

std::uint64_t report::total_lost() const noexcept {
  std::uint64_t n = 0;
  for (const auto& q : results) n += q.lost();
  return n;
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

  std::vector<double> joins;
  auto& results = j["results"] = nlohmann::json::array();
  for (const auto& q : r.results) {
    nlohmann::json e;
    e["index"] = q.index;
    e["state"] = q.state;
    if (!q.error.empty()) e["error"] = q.error;
    if (q.qpn) e["qpn"] = *q.qpn;
    if (q.dgid) e["dgid"] = *q.dgid;
    if (q.mlid) e["mlid"] = *q.mlid;
    if (q.sl) e["sl"] = *q.sl;
    if (q.remote_qpn) e["remote_qpn"] = *q.remote_qpn;
    if (q.qkey) e["qkey"] = *q.qkey;
    if (q.join_ms) {
      e["join_ms"] = *q.join_ms;
      joins.push_back(*q.join_ms * 1000.0);
    }
    if (q.loopback_blocked) e["loopback_blocked"] = *q.loopback_blocked;
    if (r.role == "sender") {
      e["sent"] = q.sent;
    } else {
      e["received"] = q.received;
      e["expected"] = q.expected;
      e["lost"] = q.lost();
      if (r.verify) e["verify_errors"] = q.verify_errors;
    }
    results.push_back(std::move(e));
  }
  if (r.role == "sender") {
    j["sent"] = r.total(&qp_result::sent);
  } else {
    j["received"] = r.total(&qp_result::received);
    j["expected"] = r.total(&qp_result::expected);
    j["lost"] = r.total_lost();
    if (r.verify) j["verify_errors"] = r.total(&qp_result::verify_errors);
  }
  if (r.elapsed_ms) j["elapsed_ms"] = *r.elapsed_ms;
  if (!joins.empty()) j["join_us"] = fabric::summarize(joins);
}

std::string joined_line(const qp_result& q) {
  return fmt::format("mckey: joined dgid: {} mlid 0x{:x} sl {}", q.dgid.value_or(""), q.mlid.value_or(0),
                     static_cast<int>(q.sl.value_or(0)));
}

std::vector<std::string> loss_lines(const report& r) {
  std::vector<std::string> lines;
  for (const auto& q : r.results) {
    if (q.state != "joined") continue;
    if (q.lost() > 0)
      lines.push_back(fmt::format("mckey: qp {}: received {} of {} messages, {} lost", q.index, q.received, q.expected,
                                  q.lost()));
    if (q.verify_errors > 0)
      lines.push_back(fmt::format("mckey: qp {}: {} messages failed verification", q.index, q.verify_errors));
  }
  return lines;
}

std::vector<std::string> stats_lines(const report& r) {
  std::vector<std::string> lines;
  if (r.role == "sender")
    lines.push_back(fmt::format("mckey: {} QPs, sent {}", r.results.size(), r.total(&qp_result::sent)));
  else
    lines.push_back(fmt::format("mckey: {} QPs, received {} of {}, lost {}", r.results.size(),
                                r.total(&qp_result::received), r.total(&qp_result::expected), r.total_lost()));
  std::vector<double> joins;
  for (const auto& q : r.results)
    if (q.join_ms) joins.push_back(*q.join_ms * 1000.0);
  if (!joins.empty()) lines.push_back("mckey: join " + fabric::format_summary(fabric::summarize(joins)));
  return lines;
}

std::pair<fabric::exit_code, std::string> verdict(const report& r) {
  if (auto lost = r.total_lost())
    return {fabric::exit_code::test_failed, fmt::format("lost {} of {} messages: received {}", lost,
                                                        r.total(&qp_result::expected), r.total(&qp_result::received))};
  if (auto bad = r.total(&qp_result::verify_errors))
    return {fabric::exit_code::test_failed, fmt::format("{} messages failed verification", bad)};
  return {fabric::exit_code::ok, {}};
}

}  // namespace mckey
