// Outliers: the fleet's median and spread of round-trip times, the pairs
// far above it, the extra rounds that meet them again, and the two lines
// in which the ranks agree on them.
#include "sweep.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace sweep {

using nlohmann::json;

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// A pair of ranks as a peer wrote it: [server, client], 0 <= server < client < n.
std::optional<rank_pair> read_pair(const json& j, int n) {
  if (!j.is_array() || j.size() < 2 || !j[0].is_number_integer() || !j[1].is_number_integer()) return std::nullopt;
  auto s = j[0].get<std::int64_t>(), c = j[1].get<std::int64_t>();
  if (s < 0 || s >= c || c >= n) return std::nullopt;
  return rank_pair{static_cast<int>(s), static_cast<int>(c)};
}

}  // namespace

spread spread_of(std::vector<double> p50s) {
  spread s;
  s.samples = p50s.size();
  s.median = median_of(p50s);
  for (auto& v : p50s) v = std::fabs(v - s.median);
  s.mad = median_of(std::move(p50s));
  return s;
}

bool measures_bandwidth(check c) noexcept { return c == check::bw; }

std::optional<double> fleet_bar::bar_gbps() const {
  std::optional<double> bar = expect_gbps;
  if (best_gbps) bar = std::max(bar.value_or(0.0), bw_fraction * *best_gbps);
  return bar;
}

std::vector<std::size_t> slow_pairs(check c, const std::vector<double>& figures, const verdict_options& o,
                                    fleet_bar& bar) {
  // Three pairs or more make a fleet: with fewer, one pair's figure would
  // set the bar it is judged by.
  constexpr std::size_t fleet_size = 3;
  std::vector<std::size_t> out;
  bar = {};
  if (measures_bandwidth(c)) {
    bar.bw_fraction = o.bw_fraction;
    bar.expect_gbps = o.expect_gbps;
    if (figures.size() >= fleet_size) {
      // The 90th percentile, nearest rank: one lucky pair does not set the bar.
      std::vector<double> sorted = figures;
      auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(sorted.size()))) - 1;
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
      bar.best_gbps = sorted[rank];
    }
    auto floor = bar.bar_gbps();
    for (std::size_t i = 0; floor && i < figures.size(); ++i)
      if (figures[i] < *floor) out.push_back(i);
    return out;
  }
  bar.fleet = spread_of(figures);
  bar.outlier_factor = o.outlier_factor;
  constexpr double mad_to_sigma = 1.4826;  // a normal distribution's MAD to its standard deviation
  const auto& f = bar.fleet;
  if (f.samples < fleet_size) return out;
  for (std::size_t i = 0; i < figures.size(); ++i)
    if (figures[i] > o.outlier_factor * f.median && figures[i] > f.median + 3 * mad_to_sigma * f.mad) out.push_back(i);
  return out;
}

std::vector<rank_pair> outliers(const std::vector<measurement>& all, double factor, spread& fleet) {
  std::vector<double> p50s;
  for (const auto& m : all) p50s.push_back(m.p50_us);
  verdict_options o;
  o.outlier_factor = factor;
  fleet_bar bar;
  std::set<rank_pair> out;
  for (auto i : slow_pairs(check::ping, p50s, o, bar)) out.insert(all[i].pair);
  fleet = bar.fleet;
  return {out.begin(), out.end()};
}

std::vector<std::vector<pairing>> retest_rounds(std::vector<rank_pair> pairs) {
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<std::vector<pairing>> out;
  std::vector<std::set<int>> busy;
  for (auto [server, client] : pairs) {
    std::size_t r = 0;
    while (r < out.size() && (busy[r].contains(server) || busy[r].contains(client))) ++r;
    if (r == out.size()) {
      out.emplace_back();
      busy.emplace_back();
    }
    out[r].push_back({server, client, static_cast<int>(out[r].size())});
    busy[r].insert({server, client});
  }
  return out;
}

std::string measurements_line(int rank, int sweep, const std::vector<measurement>& mine) {
  json p50 = json::array();
  for (const auto& m : mine) p50.push_back({m.pair.first, m.pair.second, m.p50_us});
  return json{{"rank", rank}, {"sweep", sweep}, {"p50_us", std::move(p50)}}.dump() + "\n";
}

std::optional<std::pair<int, std::vector<measurement>>> read_measurements(std::string_view line, int n, int sweep) {
  auto j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("rank") || !j["rank"].is_number_integer() ||
      !j.contains("p50_us") || !j["p50_us"].is_array())
    return std::nullopt;
  // A rank still in an earlier sweep of --repeat speaks of stale times.
  if (!j.contains("sweep") || !j["sweep"].is_number_integer() || j["sweep"].get<std::int64_t>() != sweep) return std::nullopt;
  auto rank = j["rank"].get<std::int64_t>();
  if (rank < 0 || rank >= n) return std::nullopt;
  std::vector<measurement> out;
  for (const auto& item : j["p50_us"]) {
    auto pair = read_pair(item, n);
    if (!pair || item.size() != 3 || !item[2].is_number()) return std::nullopt;
    double us = item[2].get<double>();
    // A client measures only its own pairs, and a time is finite and positive.
    if (pair->second != rank || !std::isfinite(us) || us < 0) return std::nullopt;
    out.push_back({*pair, us});
  }
  return std::pair{static_cast<int>(rank), std::move(out)};
}

std::string agreement_line(const agreement& a) {
  json pairs = json::array();
  for (auto [s, c] : a.retest) pairs.push_back({s, c});
  return json{{"retest", std::move(pairs)}, {"median_p50_us", a.fleet.median}, {"mad_us", a.fleet.mad},
              {"samples", a.fleet.samples}}
             .dump() +
         "\n";
}

std::optional<agreement> read_agreement(std::string_view line, int n) {
  auto j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("retest") || !j["retest"].is_array()) return std::nullopt;
  agreement a;
  for (const auto& item : j["retest"]) {
    auto pair = read_pair(item, n);
    if (!pair || item.size() != 2) return std::nullopt;
    a.retest.push_back(*pair);
  }
  // Every pair is met once per round: more than n * (n - 1) / 2 is a lie.
  if (a.retest.size() > static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1) / 2) return std::nullopt;
  auto number = [&](const char* key) {
    return j.contains(key) && j[key].is_number() && std::isfinite(j[key].get<double>()) ? j[key].get<double>() : 0.0;
  };
  a.fleet.median = number("median_p50_us");
  a.fleet.mad = number("mad_us");
  a.fleet.samples = j.contains("samples") && j["samples"].is_number_unsigned() ? j["samples"].get<std::size_t>() : 0;
  return a;
}

}  // namespace sweep
