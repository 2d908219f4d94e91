// The report: its renderings, the --stats lines and the verdict; no I/O here.
#include "udaddy.hpp"

#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace udaddy {

nlohmann::json result_json(const connection_result& c) {
  auto j = fabric::result_json("connection", "connected", "connect_us", c);
  j["peer"] = fabric::text_or_null(c.peer);
  j["strangers"] = c.strangers;
  return j;
}

namespace {

/// The summary, each value with its words: the document's and the --stats lines.
fabric::cli::fields summary_fields(const report& r, int expected_connections) {
  static constexpr fabric::cli::field mtu{"mtu", "path MTU {}"};
  auto items = fmt::format("{{}} of {} connections", expected_connections);
  auto f = fabric::summary_fields({.head = "udaddy: ", .items = {"connections", items}, .setup = {"connect", "connect {}"}},
                                  r.results.size(), r.totals(), r.elapsed_us);
  f.put(mtu, r.mtu, false);
  return f;
}

}  // namespace

void to_json(nlohmann::json& j, const options& o, const report& r) {
  j["role"] = r.role;
  j["options"] = options_json(o);
  auto& results = j["results"] = nlohmann::json::array();
  for (const auto& c : r.results) results.push_back(result_json(c));
  j["summary"] = summary_fields(r, o.connections).json();
}

std::vector<std::string> loss_lines(const report& r) {
  return fabric::loss_lines("udaddy: connection", "connected", r.results);
}

std::vector<std::string> stats_lines(const report& r, int expected_connections) {
  return summary_fields(r, expected_connections).lines();
}

fabric::verdict judge(const report& r, int expected_connections) {
  std::size_t connected = 0;
  for (const auto& c : r.results) connected += c.state == "connected";
  if (connected < static_cast<std::size_t>(expected_connections))
    return {fabric::exit_code::test_failed, fmt::format("{} of {} connections arrived", connected, expected_connections)};
  return fabric::loss_verdict(r.totals());
}

}  // namespace udaddy
