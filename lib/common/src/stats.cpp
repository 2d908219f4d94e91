#include "fabric/stats.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace fabric {

latency_summary summarize(std::span<const double> samples_us) {
  latency_summary s;
  s.count = samples_us.size();
  if (s.count == 0) return s;

  std::vector<double> sorted(samples_us.begin(), samples_us.end());
  std::sort(sorted.begin(), sorted.end());
  auto rank = [&](double q) {
    auto i = static_cast<std::size_t>(q * static_cast<double>(s.count));
    return sorted[std::min(i, s.count - 1)];
  };
  s.min = sorted.front();
  s.max = sorted.back();
  s.p50 = rank(0.5);
  s.p99 = rank(0.99);
  s.p999 = rank(0.999);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.count);
  double sq = 0;
  for (double v : sorted) sq += (v - s.mean) * (v - s.mean);
  s.stdev = std::sqrt(sq / static_cast<double>(s.count));
  return s;
}

void to_json(nlohmann::json& j, const latency_summary& s) {
  if (s.count == 0) {
    // No samples: the keys stay, with no made-up values.
    j = nlohmann::json{{"min", nullptr}, {"p50", nullptr}, {"p99", nullptr}, {"p999", nullptr},
                       {"max", nullptr}, {"mean", nullptr}, {"stdev", nullptr}};
    return;
  }
  j = nlohmann::json{{"min", s.min}, {"p50", s.p50}, {"p99", s.p99}, {"p999", s.p999},
                     {"max", s.max}, {"mean", s.mean}, {"stdev", s.stdev}};
}

std::string format_summary(const latency_summary& s) {
  return fmt::format("min {:.2f} p50 {:.2f} p99 {:.2f} p99.9 {:.2f} max {:.2f} mean {:.2f} stdev {:.2f} us ({} samples)",
                     s.min, s.p50, s.p99, s.p999, s.max, s.mean, s.stdev, s.count);
}

}  // namespace fabric
