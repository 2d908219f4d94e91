// Outliers: the bar of each check, made of the fleet's figures (its median
// and spread of times; its bandwidth's 90th percentile and spread), and the
// pairs past it.
#include "fabric-sweep/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace sweep {

using nlohmann::json;

namespace {

// Three pairs or more make a fleet: with fewer, one pair's figure would
// set the bar it is judged by.
constexpr std::size_t fleet_size = 3;
// Ten pairs or more (five hosts) measure the fleet's spread: with fewer,
// one host's pairs are half of them or more, and a host below its rate
// would pass as spread.
constexpr std::size_t spread_fleet_size = 10;
// The fleet's spread lowers the fraction's bar by a third at most: below
// that, a link is slow however much the fleet varies (the safeguard when
// many pairs are below their rate and make the spread).
constexpr double spread_lowers_to = 2.0 / 3.0;
constexpr double mad_to_sigma = 1.4826;  // a normal distribution's MAD to its standard deviation

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The middle of `v`, the lower of two middle ones: for latency, the
/// faster. `v` is reordered.
template <class It>
double lower_median(It first, It last) {
  auto mid = first + (last - first - 1) / 2;
  std::nth_element(first, mid, last);
  return *mid;
}

}  // namespace

std::vector<double> typical_of(const std::vector<double>& fleet, const figure_hosts& hosts, double factor) {
  if (hosts.size() != fleet.size() || fleet.empty()) return fleet;
  std::uint32_t n = 0;
  for (auto [a, b] : hosts) n = std::max({n, a + 1, b + 1});
  // Each host's figures, side by side: host h's from starts[h] to starts[h + 1].
  std::vector<std::size_t> starts(n + 1, 0);
  for (auto [a, b] : hosts) ++starts[a + 1], ++starts[b + 1];
  for (std::uint32_t h = 0; h < n; ++h) starts[h + 1] += starts[h];
  std::vector<float> by_host(starts[n]);
  auto next = starts;
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    by_host[next[hosts[i].first]++] = static_cast<float>(fleet[i]);
    by_host[next[hosts[i].second]++] = static_cast<float>(fleet[i]);
  }
  std::vector<double> middles(n, 0);
  std::vector<double> of_hosts;
  for (std::uint32_t h = 0; h < n; ++h)
    if (starts[h] < starts[h + 1]) {
      auto first = by_host.begin() + static_cast<std::ptrdiff_t>(starts[h]);
      middles[h] = lower_median(first, by_host.begin() + static_cast<std::ptrdiff_t>(starts[h + 1]));
      of_hosts.push_back(middles[h]);
    }
  auto limit = factor * lower_median(of_hosts.begin(), of_hosts.end());
  std::vector<double> out;
  for (std::size_t i = 0; i < fleet.size(); ++i)
    if (middles[hosts[i].first] <= limit && middles[hosts[i].second] <= limit) out.push_back(fleet[i]);
  return out.empty() || out.size() == fleet.size() ? fleet : out;
}

spread spread_of(std::vector<double> p50s) {
  spread s;
  s.samples = p50s.size();
  s.median = median_of(p50s);
  for (auto& v : p50s) v = std::fabs(v - s.median);
  s.mad = median_of(std::move(p50s));
  return s;
}

std::optional<double> fleet_bar::bar_gbps() const {
  std::optional<double> bar = expect_gbps;
  if (best_gbps) {
    double by_fraction = bw_fraction * *best_gbps, by_fleet = by_fraction;
    if (spread_gbps) by_fleet = std::max(std::min(by_fraction, *spread_gbps), spread_lowers_to * by_fraction);
    bar = std::max(bar.value_or(0.0), by_fleet);
  }
  return bar;
}

bool fleet_bar::lowered_by_spread() const {
  return best_gbps && spread_gbps && *spread_gbps < bw_fraction * *best_gbps;
}

verdict_options report_verdict(const verdict_options& asked, const verdict_given& given,
                               const std::optional<verdict_options>& sweeps) {
  if (!sweeps) return asked;
  return {given.outlier_factor ? asked.outlier_factor : sweeps->outlier_factor,
          given.bw_fraction ? asked.bw_fraction : sweeps->bw_fraction,
          given.expect_gbps ? asked.expect_gbps : sweeps->expect_gbps};
}

fleet_bar bar_of(check c, const std::vector<double>& fleet, const verdict_options& o, const figure_hosts& hosts) {
  fleet_bar bar;
  switch (kind_of(c).judged) {
    case judged_by::delivery:  // no figures: a pair passes or fails
      break;
    case judged_by::bandwidth:
      bar.bw_fraction = o.bw_fraction;
      bar.expect_gbps = o.expect_gbps;
      if (fleet.size() >= fleet_size) {
        // The 90th percentile, nearest rank: one lucky pair does not set the bar.
        std::vector<double> sorted = fleet;
        auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(sorted.size()))) - 1;
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
        bar.best_gbps = sorted[rank];
        if (fleet.size() >= spread_fleet_size) {
          auto f = spread_of(std::move(sorted));  // the copy's last use: no second one
          bar.spread_gbps = f.median - 3 * mad_to_sigma * f.mad;
        }
      }
      break;
    case judged_by::time:
      bar.fleet = spread_of(typical_of(fleet, hosts, o.outlier_factor));
      bar.fleet.samples = fleet.size();
      bar.outlier_factor = o.outlier_factor;
      break;
  }
  return bar;
}

bool is_slow(check c, double figure, const fleet_bar& bar) {
  switch (kind_of(c).judged) {
    case judged_by::delivery:
      return false;
    case judged_by::bandwidth: {
      auto floor = bar.bar_gbps();
      return floor && figure < *floor;
    }
    case judged_by::time: {
      const auto& f = bar.fleet;
      return f.samples >= fleet_size && figure > bar.outlier_factor * f.median &&
             figure > f.median + 3 * mad_to_sigma * f.mad;
    }
  }
  return false;
}

std::vector<std::size_t> slow_pairs(check c, const std::vector<double>& figures, const verdict_options& o,
                                    fleet_bar& bar, const figure_hosts& hosts) {
  bar = bar_of(c, figures, o, hosts);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < figures.size(); ++i)
    if (is_slow(c, figures[i], bar)) out.push_back(i);
  return out;
}

std::vector<rank_pair> outliers(check c, const std::vector<measurement>& all, const verdict_options& o, fleet_bar& bar) {
  std::vector<double> figures;
  figure_hosts hosts;
  for (const auto& m : all) {
    figures.push_back(m.figure);
    hosts.emplace_back(static_cast<std::uint32_t>(m.pair.first), static_cast<std::uint32_t>(m.pair.second));
  }
  std::set<rank_pair> out;
  for (auto i : slow_pairs(c, figures, o, bar, hosts)) out.insert(all[i].pair);
  return {out.begin(), out.end()};
}

}  // namespace sweep
