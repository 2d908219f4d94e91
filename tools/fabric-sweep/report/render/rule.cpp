// The verdict's rule as one sentence, as the table and the page say it.
#include "fabric-sweep/report/render/render.hpp"

#include <fmt/format.h>

namespace sweep {

std::string bar_rule(const matrix& m) {
  const auto& b = m.bar;
  bool bw = measures_bandwidth(m.check);
  auto figure = [&](double v) { return bw ? gbps_text(v) + " Gb/s" : fmt::format("{:.1f} us", v); };
  std::string past = bw ? "slow below" : "slow above";
  switch (b.source) {
    case bar_source::none:
      if (kind_of(m.check).judged == judged_by::delivery) return "a pair passes when each side heard the other";
      if (b.fleet_pairs == 0) return "no pair measured";
      return "no bar: fewer than 3 pairs measured";
    case bar_source::expected:
      return bw ? fmt::format("{} {}: {} of the expected {}", past, figure(*b.value), b.bw_fraction, figure(*b.expected))
                : fmt::format("{} {}: {} times the expected {}", past, figure(*b.value), b.outlier_factor,
                              figure(*b.expected));
    case bar_source::first_run:
      return fmt::format("{} {}: the first run's bar, that the --pairs file carried", past, figure(*b.value));
    case bar_source::ports:
      return fmt::format("{} {} of the lower data rate of each pair's two ports{}", past, b.bw_fraction,
                         b.value ? fmt::format(" (else {}, the fleet's)", figure(*b.value)) : std::string());
    case bar_source::fleet: break;
  }
  double ref = b.group.median;
  std::string group = fmt::format("{} of {} pairs", b.group.samples, b.fleet_pairs);
  if (bw) {
    double by_fraction = b.bw_fraction * ref;
    std::string adjust = *b.value < by_fraction * (1 - 1e-9)   ? ", lowered to their own spread"
                         : *b.value > by_fraction * (1 + 1e-9) ? ", raised to between the fleet's two groups"
                                                               : "";
    return fmt::format("{} {}: {} of the healthy pairs' median {} ({}){}", past, figure(*b.value), b.bw_fraction,
                       figure(ref), group, adjust);
  }
  double by_factor = b.outlier_factor * ref;
  return fmt::format("{} {}: {} times the healthy pairs' median {} ({}){}", past, figure(*b.value), b.outlier_factor,
                     figure(ref), group, *b.value > by_factor * (1 + 1e-9) ? ", raised to their own spread" : "");
}

}  // namespace sweep
