// Outliers: the fleet's median and spread of round-trip times, and the
// pairs far above it.
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

}  // namespace

spread spread_of(std::vector<double> p50s) {
  spread s;
  s.samples = p50s.size();
  s.median = median_of(p50s);
  for (auto& v : p50s) v = std::fabs(v - s.median);
  s.mad = median_of(std::move(p50s));
  return s;
}

bool is_outlier(double p50, const spread& fleet, double factor) {
  constexpr double mad_to_sigma = 1.4826;  // a normal distribution's MAD to its standard deviation
  return fleet.samples >= 3 && p50 > factor * fleet.median && p50 > fleet.median + 3 * mad_to_sigma * fleet.mad;
}

std::vector<rank_pair> outliers(const std::vector<measurement>& all, double factor, spread& fleet) {
  std::vector<double> p50s;
  for (const auto& m : all) p50s.push_back(m.p50_us);
  fleet = spread_of(std::move(p50s));
  std::set<rank_pair> out;
  for (const auto& m : all)
    if (is_outlier(m.p50_us, fleet, factor)) out.insert(m.pair);
  return {out.begin(), out.end()};
}

}  // namespace sweep
