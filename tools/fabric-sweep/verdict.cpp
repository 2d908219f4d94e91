// The bar of each check: what the fabric should do when the admin says so,
// the bar a re-run carries from its first run, or the fleet's own, made of
// its healthiest group of pairs; and the pairs past it.
#include "fabric-sweep/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <numeric>
#include <set>

namespace sweep {

namespace {

// Three pairs or more make a fleet, and a group of it: with fewer, one
// pair's figure would set the bar it is judged by.
constexpr std::size_t fleet_size = 3;
// The fleet's spread lowers the fraction's bar by a third at most: below
// that, a link is slow however much the fleet varies.
constexpr double spread_lowers_to = 2.0 / 3.0;
constexpr double mad_to_sigma = 1.4826;  // a normal distribution's MAD to its standard deviation

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  auto n = v.size();
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

/// The middle of `v`, the lower of two middle ones: for latency, the
/// faster. `v` is reordered.
template <class It>
double lower_median(It first, It last) {
  auto mid = first + (last - first - 1) / 2;
  std::nth_element(first, mid, last);
  return *mid;
}

/// The scaled MAD of sorted `v[from, to)`: a normal distribution's
/// standard deviation.
double sigma_of(const std::vector<double>& sorted, std::size_t from, std::size_t to) {
  if (to - from < 2) return 0;
  std::vector<double> part(sorted.begin() + static_cast<std::ptrdiff_t>(from), sorted.begin() + static_cast<std::ptrdiff_t>(to));
  return mad_to_sigma * spread_of(std::move(part)).mad;
}

/// How far apart noise alone may split n figures, in scaled MADs: Otsu's
/// cut of one normal sample leaves its halves' medians about 2.3 MADs
/// apart, of a uniform one 2.7, and small samples wander far more.
double split_apart(std::size_t n) { return 2.5 + 20 / std::sqrt(static_cast<double>(n)); }

/// The deepest a fleet of n pairs' noise reaches by chance, in standard
/// deviations, and a little more: the lowest of n normal figures is
/// about sqrt(2 ln n) below their middle.
double noise_depth(std::size_t n) {
  auto pairs = static_cast<double>(std::max<std::size_t>(n, 2));
  // The last term: a few pairs' spread says little of their noise.
  return 2 + std::sqrt(2 * std::log(pairs)) + 4 / std::sqrt(pairs);
}

/// The healthy group of `x` (log figures, a faster pair higher, sorted
/// ascending): the range [from, x.size()) it starts at, and the split
/// that put it apart, when one did (its slower part's range's start is
/// `slower_from`). `apart` is the log ratio the slower part's median must
/// be below the faster's.
struct group_found {
  std::size_t from = 0;
  std::optional<std::size_t> slower_from;
};

group_found healthy_group(const std::vector<double>& x, double apart) {
  group_found g;
  std::vector<double> sums(x.size() + 1, 0);
  for (std::size_t i = 0; i < x.size(); ++i) sums[i + 1] = sums[i] + x[i];
  for (;;) {
    auto from = g.from, n = x.size() - from;
    if (n <= fleet_size) break;
    // Otsu: the cut k that maximizes the between-group variance.
    std::size_t best = 0;
    double most = -1;
    for (std::size_t k = from + 1; k < x.size(); ++k) {
      double lo = static_cast<double>(k - from), hi = static_cast<double>(x.size() - k);
      double m1 = (sums[k] - sums[from]) / lo, m2 = (sums[x.size()] - sums[k]) / hi;
      double between = lo * hi * (m2 - m1) * (m2 - m1);
      if (between > most) most = between, best = k;
    }
    if (x.size() - best < fleet_size) break;
    auto median_in = [&](std::size_t a, std::size_t b) {
      auto m = a + (b - a) / 2;
      return (b - a) % 2 == 1 ? x[m] : (x[m - 1] + x[m]) / 2;
    };
    double slow = median_in(from, best), fast = median_in(best, x.size());
    double s1 = sigma_of(x, from, best), s2 = sigma_of(x, best, x.size());
    double pooled = std::sqrt((s1 * s1 + s2 * s2) / 2);
    if (pooled > 0 && fast - slow < split_apart(n) * pooled) break;
    if (fast - slow <= apart) break;  // not slower than the rule's ratio
    g.slower_from = from;
    g.from = best;
  }
  return g;
}

}  // namespace

std::string_view source_name(bar_source s) noexcept {
  constexpr std::string_view names[] = {"none", "fleet", "expected", "ports", "first_run"};
  return names[static_cast<int>(s)];
}

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

spread spread_of(std::vector<double> figures) {
  spread s;
  s.samples = figures.size();
  s.median = median_of(figures);
  for (auto& v : figures) v = std::fabs(v - s.median);
  s.mad = median_of(std::move(figures));
  return s;
}

std::optional<double> data_rate_gbps(const port_rate& p) {
  if (!(p.rate_gbps > 0) || !std::isfinite(p.rate_gbps)) return std::nullopt;
  auto same = [](std::string_view x, std::string_view y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(),
                      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)); });
  };
  auto is = [&](std::string_view s) { return same(p.speed, s); };
  double encoding = is("SDR") || is("DDR") || is("QDR") ? 0.8 : is("FDR") ? 64.0 / 66.0 : 1.0;
  bool ethernet = same(p.link_layer, "Ethernet");
  double headers = ethernet ? 82 : 26;
  double mtu = p.mtu > 0 ? p.mtu : ethernet ? 1024 : 2048;
  return p.rate_gbps * encoding * mtu / (mtu + headers);
}

verdict_options report_verdict(const verdict_options& asked, const verdict_given& given,
                               const std::optional<verdict_options>& sweeps) {
  if (!sweeps) return asked;
  auto out = *sweeps;
  if (given.outlier_factor) out.outlier_factor = asked.outlier_factor;
  if (given.bw_fraction) out.bw_fraction = asked.bw_fraction;
  if (given.expect_gbps) {
    out.expect_gbps = asked.expect_gbps;
    out.expect_gbps_auto = asked.expect_gbps_auto;
  }
  if (given.expect_us) out.expect_us = asked.expect_us;
  return out;
}

fleet_bar fleet_bar_of(check c, const std::vector<double>& fleet, const verdict_options& o, const figure_hosts& hosts) {
  fleet_bar bar;
  bar.outlier_factor = o.outlier_factor;
  bar.bw_fraction = o.bw_fraction;
  bar.fleet_pairs = fleet.size();
  auto judged = kind_of(c).judged;
  if (judged == judged_by::delivery) return bar;
  bool bw = judged == judged_by::bandwidth;
  if (fleet.size() < fleet_size) return bar;
  // Higher is faster on the log scale: a time's inverse.
  std::vector<double> x;
  for (double f : bw ? fleet : typical_of(fleet, hosts, o.outlier_factor))
    if (f > 0 && std::isfinite(f)) x.push_back(bw ? std::log(f) : -std::log(f));
  if (x.empty()) return bar;
  std::sort(x.begin(), x.end());
  auto found = healthy_group(x, bw ? -std::log(o.bw_fraction) : std::log(o.outlier_factor));
  std::vector<double> group;
  for (auto i = found.from; i < x.size(); ++i) group.push_back(bw ? std::exp(x[i]) : std::exp(-x[i]));
  bar.source = bar_source::fleet;
  bar.group = spread_of(group);
  double median = bar.group.median, sigma = mad_to_sigma * bar.group.mad;
  // The healthy pairs' noise: their MAD, or their faster half's deviation
  // when that is more (few pairs make a MAD that says less than it is).
  double faster_half = 0;
  std::size_t above = 0;
  for (double f : group)
    if (bw ? f > median : f < median) faster_half += (f - median) * (f - median), ++above;
  if (above > 0) sigma = std::max(sigma, std::sqrt(faster_half / static_cast<double>(above)));
  double depth = noise_depth(fleet.size()) * sigma;
  if (found.slower_from) {
    // Every pair below the healthy group: the slower group (of one split
    // or several).
    std::vector<double> slower(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(found.from));
    double m = median_of(std::move(slower));
    bar.split = fleet_split{found.from, x.size() - found.from, bw ? std::exp(m) : std::exp(-m), median};
  }
  if (bw) {
    double by_fraction = o.bw_fraction * median;
    bar.value = std::max(std::min(by_fraction, median - depth), spread_lowers_to * by_fraction);
  } else {
    bar.value = std::max(o.outlier_factor * median, median + depth);
  }
  if (found.slower_from) {
    // Between the two groups, nearer the tighter one, and past every pair
    // of the slower: the whole slower group is slow.
    auto lo = *found.slower_from, hi = found.from;
    std::vector<double> slower(x.begin() + static_cast<std::ptrdiff_t>(lo), x.begin() + static_cast<std::ptrdiff_t>(hi));
    double m1 = median_of(slower), m2 = bw ? std::log(median) : -std::log(median);
    double s1 = sigma_of(x, lo, hi), s2 = sigma_of(x, hi, x.size());
    double between = s1 + s2 > 0 ? (m2 * s1 + m1 * s2) / (s1 + s2) : (m1 + m2) / 2;
    double lo_edge = x[hi - 1], hi_edge = x[hi];
    // Strictly between: a group without spread would put it on its own
    // edge, where its own pairs would be judged slow.
    if (!(between > lo_edge && between < hi_edge)) between = (lo_edge + hi_edge) / 2;
    bar.value = bw ? std::max(*bar.value, std::exp(between)) : std::min(*bar.value, std::exp(-between));
  }
  return bar;
}

fleet_bar bar_of(check c, const std::vector<double>& fleet, const verdict_options& o, const figure_hosts& hosts,
                 std::optional<double> carried) {
  auto judged = kind_of(c).judged;
  fleet_bar bar;
  bar.outlier_factor = o.outlier_factor;
  bar.bw_fraction = o.bw_fraction;
  bar.fleet_pairs = fleet.size();
  if (judged == judged_by::delivery) return bar;
  bool bw = judged == judged_by::bandwidth;
  if (bw && o.expect_gbps_auto) {
    // Each pair its own (pair_bar); the fleet's stands for a pair whose
    // ports' rates are unknown.
    auto fleets = fleet_bar_of(c, fleet, o, hosts);
    fleets.source = bar_source::ports;
    return fleets;
  }
  // The fleet's middle, for a reader: the bar does not depend on it.
  bar.group = spread_of(bw ? fleet : typical_of(fleet, hosts, o.outlier_factor));
  if (auto expected = bw ? o.expect_gbps : o.expect_us) {
    bar.source = bar_source::expected;
    bar.expected = expected;
    bar.value = bw ? o.bw_fraction * *expected : o.outlier_factor * *expected;
    return bar;
  }
  if (carried) {
    bar.source = bar_source::first_run;
    bar.value = carried;
    return bar;
  }
  return fleet_bar_of(c, fleet, o, hosts);
}

double pair_bar(double a, double b, const verdict_options& o) { return o.bw_fraction * std::min(a, b); }

bool is_slow(check c, double figure, const fleet_bar& bar, std::optional<double> own) {
  auto value = bar.source == bar_source::ports && own ? own : bar.value;
  if (!value) return false;
  switch (kind_of(c).judged) {
    case judged_by::delivery: return false;
    case judged_by::bandwidth: return figure < *value;
    case judged_by::time: return figure > *value;
  }
  return false;
}

std::vector<rank_pair> outliers(check c, const std::vector<measurement>& all, const verdict_options& o, fleet_bar& bar,
                                std::optional<double> carried, const std::vector<double>& rates) {
  std::vector<double> figures;
  figure_hosts hosts;
  for (const auto& m : all) {
    figures.push_back(m.figure);
    hosts.emplace_back(static_cast<std::uint32_t>(m.pair.first), static_cast<std::uint32_t>(m.pair.second));
  }
  bar = bar_of(c, figures, o, hosts, carried);
  auto rate = [&](int r) {
    return r >= 0 && static_cast<std::size_t>(r) < rates.size() && rates[static_cast<std::size_t>(r)] > 0
               ? std::optional(rates[static_cast<std::size_t>(r)])
               : std::nullopt;
  };
  std::set<rank_pair> out;
  for (const auto& m : all) {
    std::optional<double> own;
    if (auto a = rate(m.pair.first), b = rate(m.pair.second); a && b) own = pair_bar(*a, *b, o);
    if (is_slow(c, m.figure, bar, own)) out.insert(m.pair);
  }
  return {out.begin(), out.end()};
}

std::string bar_line(check c, double value) {
  return fmt::format("#bar {} {} {}", check_name(c), value, measures_bandwidth(c) ? "gbps" : "us");
}

std::optional<double> bar_of_line(std::string_view line, check c) {
  constexpr std::string_view head = "#bar ";
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (!line.starts_with(head)) return std::nullopt;
  line.remove_prefix(head.size());
  auto word = [&]() {
    auto end = line.find(' ');
    auto w = line.substr(0, end);
    line = end == std::string_view::npos ? std::string_view() : line.substr(end + 1);
    return w;
  };
  auto name = word(), number = word(), unit = word();
  if (!line.empty() || name != check_name(c) || unit != (measures_bandwidth(c) ? "gbps" : "us")) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
  auto range = measures_bandwidth(c) ? expect_gbps_range : expect_us_range;
  if (!range.holds(v)) return std::nullopt;
  return v;
}

}  // namespace sweep
