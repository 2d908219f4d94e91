// The report: every host's lines merged into one matrix, judged and printed.
#include "sweep.hpp"

#include "fabric/console.hpp"
#include "fabric/files.hpp"
#include "fabric/json_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

namespace sweep {

using nlohmann::json;

std::size_t matrix::count(std::string_view state) const {
  return static_cast<std::size_t>(std::count_if(pairs.begin(), pairs.end(), [&](const merged_pair& p) { return p.state == state; }));
}

namespace {

std::optional<fabric::latency_summary> summary_of(const json& j) {
  if (!j.is_object()) return std::nullopt;
  fabric::latency_summary s;
  s.count = j.value("count", std::size_t{0});
  s.min = j.value("min_us", 0.0);
  s.p50 = j.value("p50_us", 0.0);
  s.p99 = j.value("p99_us", 0.0);
  s.p999 = j.value("p999_us", 0.0);
  s.max = j.value("max_us", 0.0);
  s.mean = j.value("mean_us", 0.0);
  s.stdev = j.value("stdev_us", 0.0);
  return s;
}

/// What one line says, if anything the report uses.
struct reading {
  std::vector<std::string> hosts;  ///< a rank's list of every host
  std::vector<json> pairs;
  std::optional<double> sweep_us;  ///< a rank's whole sweep (its document)
};

reading read_line(const std::string& line) {
  reading r;
  auto brace = line.find('{');
  if (brace == std::string::npos) return r;
  auto j = json::parse(line.substr(brace), nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("tool", "") != "fabric-sweep") return r;
  if (j.value("event", "") == "sweep" && j["sweep"].contains("hosts")) r.hosts = j["sweep"]["hosts"].get<std::vector<std::string>>();
  if (j.value("event", "") == "pair") r.pairs.push_back(j["pair"]);
  if (j.contains("results") && j["results"].is_array()) {
    for (const auto& item : j["results"])
      if (item.value("kind", "") == "pair") r.pairs.push_back(item);
    if (j["summary"].contains("hosts")) r.hosts = j["summary"]["hosts"].get<std::vector<std::string>>();
    if (j["summary"].value("elapsed_us", json()).is_number()) r.sweep_us = j["summary"]["elapsed_us"].get<double>();
  }
  return r;
}

}  // namespace

matrix merge(const std::vector<std::string>& lines, double outlier_factor, std::optional<check> only) {
  matrix m;
  std::vector<json> seen;
  std::size_t unreadable = 0;
  // srun -l splits a long line into labelled pieces ("0: {...", "0: ...");
  // a piece that is not whole JSON waits for the next piece with its label.
  std::map<std::string, std::string> pending;  // label -> text so far
  auto whole = [](const std::string& text) {
    auto brace = text.find('{');
    return brace != std::string::npos && json::accept(std::string_view(text).substr(brace));
  };
  for (const auto& raw : lines) {
    if (raw.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string line = raw;
    for (auto it = pending.begin(); it != pending.end(); ++it) {
      if (!raw.starts_with(it->first)) continue;
      std::string joined = it->second + raw.substr(it->first.size());
      if (whole(joined) || !whole(raw)) line = std::move(joined);
      else ++unreadable;  // what waited never ended; this line stands alone
      pending.erase(it);
      break;
    }
    auto brace = line.find('{');
    if (brace != std::string::npos && !whole(line)) {
      if (line.size() < (std::size_t{1} << 20)) pending[line.substr(0, brace)] = line;
      else ++unreadable;
      continue;
    }
    reading r;
    try {
      r = read_line(line);
    } catch (const json::exception&) {
      ++unreadable;
      continue;
    }
    if (r.hosts.empty() && r.pairs.empty()) {
      ++unreadable;
      continue;
    }
    if (!r.hosts.empty() && r.hosts.size() > m.hosts.size()) m.hosts = r.hosts;
    if (r.sweep_us) m.sweep_us = std::max(m.sweep_us.value_or(0.0), *r.sweep_us);
    for (auto& p : r.pairs) seen.push_back(std::move(p));
  }
  unreadable += pending.size();
  if (unreadable > 0) m.notes.push_back(fmt::format("{} lines were not the sweep's and were skipped", unreadable));
  // One check a matrix: the one asked for, else the first pair line's.
  auto check_word = [](const json& p) { return p.value("check", std::string(check_name(check::ping))); };
  if (!only && !seen.empty()) only = check_of(check_word(seen.front()));
  m.check = only.value_or(check::ping);
  auto others = std::erase_if(seen, [&](const json& p) { return check_word(p) != check_name(m.check); });
  if (others > 0)
    m.notes.push_back(fmt::format("{} pair lines of other checks than {} were skipped (report --check chooses)", others,
                                  check_name(m.check)));
  // Hosts named only in pair lines (no rank's list came through).
  for (const auto& p : seen)
    for (const char* side : {"server", "client"})
      if (auto h = p.value(side, ""); !h.empty() && std::find(m.hosts.begin(), m.hosts.end(), h) == m.hosts.end())
        m.hosts.push_back(h);

  // Each meeting of a pair (its sweep of --repeat, its round) merged
  // from its two sides.
  using host_pair = std::pair<std::string, std::string>;
  using when = std::pair<int, int>;  // sweep, round
  struct meeting {
    merged_pair seen;
    bool retest = false;
  };
  std::map<host_pair, std::map<when, meeting>> meetings;
  auto key = [&](const std::string& x, const std::string& y) {
    auto ix = std::find(m.hosts.begin(), m.hosts.end(), x), iy = std::find(m.hosts.begin(), m.hosts.end(), y);
    return ix < iy ? host_pair{x, y} : host_pair{y, x};
  };
  for (const auto& p : seen) {
    int round = p.value("round", 0), sweep = p.value("sweep", 1);
    auto& at = meetings[key(p.value("server", ""), p.value("client", ""))][{sweep, round}];
    auto& slot = at.seen;
    bool ok = p.value("ok", false);
    bool client_side = p.value("side", "") == "client";
    at.retest = p.value("retest", false);
    slot.round = round;
    slot.sweep = sweep;
    slot.elapsed_us = std::max(slot.elapsed_us, p.value("elapsed_us", 0.0));
    // The client's word is the measurement; a failure from either side stands.
    if (!ok) {
      slot.state = "failed";
      if (slot.error.empty() || client_side) slot.error = p.value("error", json("")).is_string() ? p["error"].get<std::string>() : "";
    } else if (slot.state != "failed" && (client_side || slot.state == "missing")) {
      slot.state = "ok";
      if (client_side) slot.latency = summary_of(p.value("latency", json()));
    }
  }
  // A pair is its latest sweep's word: the round's meeting, unless it was
  // met again: then the best of its re-tests stands (an outlier that
  // passes once was passing traffic; one that fails every time is failed).
  auto final_word = [](const std::map<when, meeting>& met) {
    merged_pair out;
    const merged_pair* best = nullptr;
    const merged_pair* failed = nullptr;
    int latest = met.rbegin()->first.first;
    for (const auto& [at_when, at] : met) {
      if (at_when.first != latest) continue;
      if (!at.retest) {
        out = at.seen;
        continue;
      }
      ++out.retests;
      if (at.seen.state == "ok" && (!best || (at.seen.latency && (!best->latency || at.seen.latency->p50 < best->latency->p50))))
        best = &at.seen;
      if (at.seen.state == "failed" && !failed) failed = &at.seen;
    }
    if (out.retests == 0) return out;
    if (out.latency) out.first_p50_us = out.latency->p50;
    int retests = out.retests;
    auto first = out.first_p50_us;
    out = best ? *best : failed ? *failed : out;
    if (!best && failed) out.error = "every re-test failed: " + out.error;
    out.retests = retests;
    out.first_p50_us = first;
    return out;
  };
  for (std::size_t i = 0; i < m.hosts.size(); ++i)
    for (std::size_t k = i + 1; k < m.hosts.size(); ++k) {
      auto it = meetings.find({m.hosts[i], m.hosts[k]});
      merged_pair p = it == meetings.end() ? merged_pair{} : final_word(it->second);
      p.a = m.hosts[i];
      p.b = m.hosts[k];
      m.pairs.push_back(std::move(p));
    }

  // Slow pairs: far above the fleet's median (the rule the run's re-tests use).
  std::vector<double> p50s;
  for (const auto& p : m.pairs)
    if (p.state == "ok" && p.latency) p50s.push_back(p.latency->p50);
  auto fleet = spread_of(std::move(p50s));
  m.median_p50_us = fleet.median;
  m.mad_us = fleet.mad;
  for (auto& p : m.pairs)
    if (p.state == "ok" && p.latency && is_outlier(p.latency->p50, fleet, outlier_factor)) p.state = "slow";

  // Every meeting took its round's time, the re-tests' included; with
  // --repeat, the latest sweep's rounds.
  int latest = 0;
  for (const auto& [pair, met] : meetings) latest = std::max(latest, met.rbegin()->first.first);
  std::map<int, double> slowest;
  for (const auto& [pair, met] : meetings)
    for (const auto& [at_when, at] : met)
      if (at_when.first == latest && at_when.second > 0)
        slowest[at_when.second] = std::max(slowest[at_when.second], at.seen.elapsed_us);
  m.rounds = static_cast<int>(slowest.size());
  for (const auto& [round, us] : slowest) m.rounds_slowest_us += us;

  std::map<std::string, int> bad;
  for (const auto& p : m.pairs)
    if (p.state != "ok") {
      ++bad[p.a];
      ++bad[p.b];
    }
  for (auto& [h, n] : bad) m.worst.emplace_back(h, n);
  std::stable_sort(m.worst.begin(), m.worst.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  if (auto missing = m.count("missing"); missing > 0)
    m.notes.push_back(fmt::format("{} of {} pairs were reported by neither side", missing, m.pairs.size()));
  return m;
}

std::string format_matrix(const matrix& m) {
  std::string s;
  std::size_t w = 6;
  for (const auto& h : m.hosts) w = std::max(w, fabric::printable(h).size());
  auto cell = [&](const std::string& a, const std::string& b) -> std::string {
    if (a == b) return "-";
    for (const auto& p : m.pairs)
      if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) {
        if (p.state == "failed") return "FAIL";
        if (p.state == "missing") return "?";
        std::string v = p.latency ? fmt::format("{:.1f}", p.latency->p50) : "ok";
        return p.state == "slow" ? v + "!" : v;
      }
    return "?";
  };
  if (m.check == check::multicast)
    s += "multicast: ok when each of a pair heard all of the other's datagrams; FAIL failed, ? not reported\n";
  else
    s += fmt::format("p50 {} (us) of each pair; ! slow, FAIL failed, ? not reported\n", check_measure(m.check));
  s += fmt::format("{:<{}}", "", w);
  for (const auto& h : m.hosts) s += fmt::format(" {:>{}}", fabric::printable(h), w);
  s += "\n";
  for (const auto& a : m.hosts) {
    s += fmt::format("{:<{}}", fabric::printable(a), w);
    for (const auto& b : m.hosts) s += fmt::format(" {:>{}}", cell(a, b), w);
    s += "\n";
  }
  s += fmt::format("pairs: {} ok, {} slow, {} failed, {} missing; median p50 {:.1f} us, MAD {:.1f} us\n", m.count("ok"),
                   m.count("slow"), m.count("failed"), m.count("missing"), m.median_p50_us, m.mad_us);
  for (const auto& p : m.pairs)
    if (p.state == "failed")
      s += fmt::format("failed: {} <-> {}: {}\n", fabric::printable(p.a), fabric::printable(p.b), fabric::printable(p.error));
  for (const auto& p : m.pairs)
    if (p.retests > 0 && p.first_p50_us)
      s += fmt::format("re-tested: {} <-> {}: p50 {:.1f} us, then {} ({})\n", fabric::printable(p.a), fabric::printable(p.b),
                       *p.first_p50_us, p.latency ? fmt::format("{:.1f} us", p.latency->p50) : std::string("no time"),
                       p.state == "ok" ? "passed" : p.state == "slow" ? "still slow" : p.state);
  if (!m.worst.empty()) {
    s += "worst hosts:";
    for (const auto& [h, n] : m.worst) s += fmt::format(" {} ({})", fabric::printable(h), n);
    s += "\n";
  }
  for (const auto& n : m.notes) s += fmt::format("note: {}\n", n);
  return s;
}

fabric::verdict judge(const matrix& m) {
  if (m.hosts.size() < 2) return {fabric::exit_code::test_failed, "no pair results in the input"};
  auto failed = m.count("failed"), slow = m.count("slow"), missing = m.count("missing");
  if (failed + slow + missing == 0) return {};
  return {fabric::exit_code::test_failed,
          fmt::format("{} failed, {} slow, {} missing of {} pairs", failed, slow, missing, m.pairs.size())};
}

void to_json(json& j, const options& opt, const matrix& m) {
  j["role"] = "report";
  j["options"] = options_json(opt);
  json results = json::array();
  for (const auto& p : m.pairs)
    results.push_back({{"kind", "pair"},
                       {"index", results.size()},
                       {"ok", p.state == "ok"},
                       {"error", p.state == "ok"       ? json(nullptr)
                                 : p.state == "failed" ? json(p.error)
                                                       : json(p.state == "slow" ? "slower than the fleet" : "not reported")},
                       {"a", p.a},
                       {"b", p.b},
                       {"state", p.state},
                       {"round", p.round},
                       {"latency", fabric::value_or_null(p.latency)},
                       {"sweep", p.sweep},
                       {"retests", p.retests},
                       {"first_p50_us", fabric::value_or_null(p.first_p50_us)}});
  j["results"] = std::move(results);
  json worst = json::array();
  for (const auto& [h, n] : m.worst) worst.push_back({{"host", h}, {"bad_pairs", n}});
  j["summary"] = {{"check", check_name(m.check)},
                  {"hosts", m.hosts},
                  {"pairs", m.pairs.size()},
                  {"ok", m.count("ok")},
                  {"slow", m.count("slow")},
                  {"failed", m.count("failed")},
                  {"missing", m.count("missing")},
                  {"median_p50_us", m.median_p50_us},
                  {"mad_us", m.mad_us},
                  {"worst_hosts", std::move(worst)},
                  {"rounds", m.rounds},
                  {"sweep_us", fabric::value_or_null(m.sweep_us)},
                  {"rounds_slowest_us", m.rounds_slowest_us},
                  {"notes", m.notes}};
}

fabric::verdict report(const options& opt, matrix& m, fabric::console& con) {
  con.set_role("report");
  std::vector<std::string> lines;
  auto read_all = [&](std::istream& in) {
    for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  };
  if (opt.report.files.empty()) read_all(std::cin);
  for (const auto& f : opt.report.files) {
    std::ifstream in(f);
    if (!in) throw fabric::error(fabric::exit_code::usage, fmt::format("{}: cannot read it", fabric::printable(f)));
    read_all(in);
  }
  m = merge(lines, opt.outlier_factor,
            opt.report.check.empty() ? std::nullopt : check_of(opt.report.check));
  if (!opt.report.html.empty()) fabric::write_file_atomically(opt.report.html, html_page(m));
  if (!opt.report.prometheus.empty()) fabric::write_file_atomically(opt.report.prometheus, prometheus_text(m));
  auto text = format_matrix(m);
  for (std::size_t at = 0, nl; at < text.size(); at = nl + 1) {
    nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    con.line(std::string_view(text).substr(at, nl - at));
  }
  return judge(m);
}

}  // namespace sweep
