// The report: its renderings, the --stats lines and the verdict; no I/O here.
#include "mckey.hpp"

#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace mckey {

nlohmann::json result_json(const qp_result& q) {
  auto j = fabric::result_json("join", "joined", "join_us", q);
  j["dgid"] = fabric::value_or_null(q.dgid);
  j["mlid"] = fabric::value_or_null(q.mlid);
  j["sl"] = fabric::value_or_null(q.sl);
  j["loopback_blocked"] = fabric::value_or_null(q.loopback_blocked);
  return j;
}

namespace {

/// The summary, each value with its words: the document's and the --stats lines.
fabric::cli::fields summary_fields(const report& r) {
  static constexpr fabric::cli::field mtu{"mtu", "MTU {}"};
  static constexpr fabric::cli::field link_layer{"link_layer", "{}"};
  bool sender = r.role == "sender";
  auto f = fabric::summary_fields({.head = "mckey: ",
                                   .items = {"joins", "{} joins"},
                                   .setup = {"join", "join {}"},
                                   .say_sent = sender,
                                   .say_received = !sender,
                                   .say_rates = false},
                                  r.results.size(), r.totals(), r.elapsed_us);
  f.put(mtu, r.mtu, false);
  f.put(link_layer, r.link_layer.empty() ? std::nullopt : std::optional<std::string>(r.link_layer), false);
  return f;
}

}  // namespace

void to_json(nlohmann::json& j, const options& o, const report& r) {
  j["role"] = r.role;
  j["options"] = options_json(o);
  auto& results = j["results"] = nlohmann::json::array();
  for (const auto& q : r.results) results.push_back(result_json(q));
  j["summary"] = summary_fields(r).json();
}

std::string joined_line(const qp_result& q) {
  return fmt::format("mckey: joined dgid: {} mlid 0x{:x} sl {}", q.dgid.value_or(""), q.mlid.value_or(0),
                     static_cast<int>(q.sl.value_or(0)));
}

std::vector<std::string> loss_lines(const report& r) { return fabric::loss_lines("mckey: qp", "joined", r.results); }

std::vector<std::string> stats_lines(const report& r) { return summary_fields(r).lines(); }

fabric::verdict judge(const report& r) { return fabric::loss_verdict(r.totals()); }

}  // namespace mckey
