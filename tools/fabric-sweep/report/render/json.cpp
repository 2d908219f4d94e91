// The report's JSON document: its options as it judged, every pair as a
// result (written one at a time), and the summary.
#include "fabric-sweep/report/judge/judge.hpp"
#include "fabric-sweep/report/render/render.hpp"

#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sweep {

using nlohmann::json;

namespace {

json direction_json(const std::optional<direction_figures>& d) {
  if (!d) return nullptr;
  return {{"bytes", d->bytes}, {"elapsed_us", d->seconds * 1e6}, {"gbps", d->gbps}};
}

std::string error_word(const matrix& m, const merged_pair& p) {
  switch (p.state) {
    case pair_state::failed: return m.error_of(p);
    case pair_state::slow: return measures_bandwidth(m.check) ? "slower than the bar" : "slower than the fleet";
    case pair_state::missing: return "not reported";
    default: return {};
  }
}

/// What the pairs were judged against (verdict.hpp), each figure in the
/// check's unit: us for latency checks, Gb/s for bw.
json bar_json(const matrix& m) {
  const auto& b = m.bar;
  if (kind_of(m.check).judged == judged_by::delivery) return nullptr;
  bool bw = measures_bandwidth(m.check);
  auto in_unit = [&](std::string_view name, std::optional<double> v, bool mine) {
    return std::pair{fmt::format("{}_{}", name, mine ? (bw ? "gbps" : "us") : (bw ? "us" : "gbps")),
                     mine ? fabric::value_or_null(v) : json(nullptr)};
  };
  bool healthy = b.source == bar_source::fleet || b.source == bar_source::ports;
  std::optional<double> median, spread;
  if (healthy && b.group.samples > 0) median = b.group.median, spread = 1.4826 * b.group.mad;
  json out = {{"by", source_name(b.source)},
              {"rule", bar_rule(m)},
              {"healthy_pairs", healthy ? b.group.samples : 0},
              {"fleet_pairs", b.fleet_pairs},
              {"outlier_factor", b.outlier_factor},
              {"bw_fraction", b.bw_fraction},
              {"expect_us", bw ? json(nullptr) : fabric::value_or_null(b.expected)},
              {"expect_gbps", bw ? fabric::value_or_null(b.expected) : json(nullptr)}};
  for (auto [key, value] : {in_unit("bar", b.value, true), in_unit("bar", b.value, false),
                            in_unit("healthy_median", median, true), in_unit("healthy_median", median, false),
                            in_unit("healthy_spread", spread, true), in_unit("healthy_spread", spread, false)})
    out[key] = value;
  out["split"] = b.split ? json{{"slower_pairs", b.split->slower},
                                {"faster_pairs", b.split->faster},
                                {"ratio", b.split->slower_median / b.split->faster_median}}
                         : json(nullptr);
  return out;
}

/// The suspect links, worst first; null without --fabric.
json suspects_json(const matrix& m) {
  if (!m.located) return nullptr;
  auto out = json::array();
  for (const auto& s : m.located->found.suspects) out.push_back(suspect_json(s));
  return out;
}

/// What the locating read and found; null without --fabric.
json located_json(const matrix& m) {
  if (!m.located) return nullptr;
  const auto& f = *m.located;
  return {{"documents", f.documents},
          {"links", f.found.links},
          {"hosts_found", f.found.endpoints_found},
          {"hosts_not_found", f.hosts - f.found.endpoints_found},
          {"pairs_located", f.found.pairs_routed},
          {"pairs_not_located", f.found.pairs_unrouted},
          {"pairs_left_out", f.pairs_left_out}};
}

}  // namespace

json report_options_json(const options& opt, const verdict_options& v) {
  auto j = options_json(opt);
  j["outlier_factor"] = v.outlier_factor;
  j["bw_fraction"] = v.bw_fraction;
  j["expect_gbps"] = fabric::value_or_null(v.expect_gbps);
  j["expect_gbps_auto"] = v.expect_gbps_auto;
  j["expect_us"] = fabric::value_or_null(v.expect_us);
  return j;
}

json report_options_json(const options& opt, const matrix& m) { return report_options_json(opt, m.verdict); }

json default_report_options_json() {
  options none;
  none.mode = mode::report;
  return report_options_json(none, none.verdict);
}

std::vector<std::pair<std::string, std::string>> changed_options(const json& given, const json& defaults) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : given.items()) {
    if (defaults.contains(key) && defaults[key] == value) continue;
    // The command line's words: the keys that are not its long names
    // (options_json), and --expect-gbps auto, a key of its own.
    std::string name = key == "files"              ? "files"
                       : key == "outliers_file"    ? "--outliers"
                       : key == "expect_gbps_auto" ? "--expect-gbps"
                                                   : "--" + key;
    std::replace(name.begin(), name.end(), '_', '-');
    std::string text;
    if (key == "expect_gbps_auto") {
      if (!value.get<bool>()) continue;  // a figure instead: --expect-gbps's own row
      text = "auto";
    } else if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_array()) {
      for (const auto& item : value) text += (text.empty() ? "" : " ") + (item.is_string() ? item.get<std::string>() : item.dump());
    } else if (value.is_boolean()) {
      text = value.get<bool>() ? "on" : "off";
    } else if (value.is_null()) {
      text = "none";
    } else {
      text = value.dump();
    }
    out.emplace_back(std::move(name), std::move(text));
  }
  return out;
}

/// A side's rail: null without rails.
json rail_json(const std::string& rail) { return rail.empty() ? json(nullptr) : json(rail); }

void each_result(const matrix& m, const fabric::result_sink& sink) {
  bool bw = measures_bandwidth(m.check);
  std::size_t index = 0;
  for (const auto& p : m.pairs) {
    if (p.state == pair_state::unplanned) continue;
    json bandwidth = nullptr;
    if (bw && std::holds_alternative<bandwidth_figures>(p.figures))
      bandwidth = {{"a_to_b", direction_json(p.a_to_b())}, {"b_to_a", direction_json(p.b_to_a())},
                   {"gbps", fabric::value_or_null(p.figure())}, {"bar_gbps", fabric::value_or_null(bar_for(m, p))}};
    sink({{"kind", "pair"},
          {"index", index++},
          {"ok", p.state == pair_state::ok},
          {"error", p.state == pair_state::ok ? json(nullptr) : json(error_word(m, p))},
          {"a", m.hosts[p.a]},
          {"b", m.hosts[p.b]},
          {"a_rail", rail_json(m.planes[p.plane].a_rail)},
          {"b_rail", rail_json(m.planes[p.plane].b_rail)},
          {"state", state_name(p.state)},
          {"round", p.sweep == 0 ? json(nullptr) : json(p.round)},
          {"latency", p.latency() ? json(*p.latency()) : json(nullptr)},
          {"bandwidth", std::move(bandwidth)},
          {"sweep", p.sweep == 0 ? json(nullptr) : json(p.sweep)},
          {"retests", p.retests},
          {"first_p50_us", fabric::value_or_null(p.first_p50_us)}});
  }
}

void to_json(json& j, const options& opt, const matrix& m) {
  j["role"] = "report";
  j["options"] = report_options_json(opt, m);
  // The results are each_result's, written as the document is.
  json worst = json::array();
  for (const auto& [h, n] : m.worst) worst.push_back({{"host", h}, {"bad_pairs", n}});
  json worst_rails = json::array();
  for (const auto& [r, n] : m.worst_rails) worst_rails.push_back({{"rail", r}, {"bad_pairs", n}});
  json rails = nullptr;
  if (m.has_rails()) rails = m.rail_names();
  bool fleet_measured = m.latency_measured() && m.bar.group.samples > 0;
  j["summary"] = {{"check", check_name(m.check)},
                  {"hosts", m.hosts},
                  {"pairs", m.planned()},
                  {"passed", m.count(pair_state::ok)},
                  {"slow", m.count(pair_state::slow)},
                  {"failed", m.count(pair_state::failed)},
                  {"missing", m.count(pair_state::missing)},
                  {"median_p50_us", fleet_measured ? json(m.bar.group.median) : json(nullptr)},
                  {"mad_us", fleet_measured ? json(m.bar.group.mad) : json(nullptr)},
                  {"bar", bar_json(m)},
                  {"worst_hosts", std::move(worst)},
                  {"rail_names", std::move(rails)},
                  {"worst_rails", std::move(worst_rails)},
                  {"rounds", m.rounds},
                  {"sweep_us", fabric::value_or_null(m.sweep_us)},
                  {"rounds_slowest_us", m.rounds_slowest_us},
                  {"run", fabric::value_or_null(m.run.id)},
                  {"run_started", fabric::value_or_null(m.run.started)},
                  {"earlier_runs", m.run.earlier_runs},
                  {"earlier_run_lines", m.run.earlier_lines},
                  {"suspects", suspects_json(m)},
                  {"located", located_json(m)},
                  {"notes", m.notes}};
}

}  // namespace sweep
