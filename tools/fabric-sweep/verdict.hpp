#pragma once
/// What makes a pair slow, by the rule of its check, in one place: rank
/// 0's choice of the pairs to re-test and the report's verdicts both judge
/// by it.

#include "fabric-sweep/rank/checks.hpp"
#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/rounds.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace sweep {

/// The fleet's middle and spread of p50 round-trip times.
struct spread {
  double median = 0, mad = 0;  ///< MAD: median absolute deviation
  std::size_t samples = 0;     ///< the pairs of the fleet
};
spread spread_of(std::vector<double> p50s);

/// The two hosts of each of a fleet's figures (any numbering of hosts).
using figure_hosts = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

/// What the figures were judged against.
struct fleet_bar {
  spread fleet;                      ///< latency checks: the typical hosts' pairs' p50s (typical_of)
  double outlier_factor = 0;         ///< latency checks: the factor of the median judged by
  std::optional<double> best_gbps;   ///< bw: the 90th percentile (nearest rank) of the pairs' figures
  /// bw: how low the fleet's own spread reaches (its median less 3 scaled
  /// MADs), with ten pairs or more: then one host's pairs are a minority
  /// that cannot widen it.
  std::optional<double> spread_gbps;
  double bw_fraction = 0;            ///< bw: the fraction of best_gbps a pair must reach
  std::optional<double> expect_gbps; ///< bw: the absolute floor asked for
  /// bw: bw_fraction of best_gbps, lowered to spread_gbps by a third at
  /// most (a fleet that varies more than the fraction allows: virtual
  /// machines, a busy fabric), or expect_gbps when higher; nullopt when
  /// neither applies.
  [[nodiscard]] std::optional<double> bar_gbps() const;
  /// bw: whether the fleet's spread lowered the bar.
  [[nodiscard]] bool lowered_by_spread() const;
};

/// The options a report judges by: each one its command line gave
/// (`given`, the values in `asked`), else the sweep's own when its ranks'
/// documents record them (`sweeps`), else the default (in `asked`): a
/// sweep run with --bw-fraction 0.5 is reported as it was judged.
verdict_options report_verdict(const verdict_options& asked, const verdict_given& given,
                               const std::optional<verdict_options>& sweeps);

/// The rule of each check, in one place: a latency check's pair is slow
/// above `outlier_factor` times the fleet's median p50 and 3 scaled MADs
/// above it (judged with three pairs or more, so that noise and a fleet
/// of two are not outliers), the median and MAD of the pairs between the
/// fleet's typical hosts (typical_of); a bw pair is slow below
/// `bw_fraction` of the fleet's 90th percentile (three pairs or more;
/// lowered by the fleet's spread, a third at most), or below `expect_gbps`.
/// Figures are p50s in us or bandwidths in Gb/s, one per pair.
///
/// The bar of a check from the fleet's figures: the sweep's rounds, each
/// measured beside as many pairs as the others (a re-test runs beside
/// fewer, and is judged against the rounds' bar, not part of it), and
/// their hosts (none given: each figure a pair of its own hosts).
fleet_bar bar_of(check c, const std::vector<double>& fleet, const verdict_options& o, const figure_hosts& hosts = {});
/// Whether a pair's figure is slow by `bar`.
[[nodiscard]] bool is_slow(check c, double figure, const fleet_bar& bar);
/// The indices of the slow ones among `figures`, ascending, judged by the
/// bar they make themselves (returned in `bar`).
std::vector<std::size_t> slow_pairs(check c, const std::vector<double>& figures, const verdict_options& o,
                                    fleet_bar& bar, const figure_hosts& hosts = {});

/// The figures of `fleet` between its typical hosts, whose latency the
/// bar is made of: a host is typical when its middle pair (the lower of
/// two middle ones) is within `factor` of the middle of the hosts' middle
/// pairs. A host slow with every peer is half the pairs of four hosts and
/// two thirds of three's, and would move a median of every pair to
/// itself; its own middle pair is one among the hosts', and the faster of
/// a healthy host's pairs stands for it. All of `fleet` when no host is
/// atypical, or without `hosts`.
std::vector<double> typical_of(const std::vector<double>& fleet, const figure_hosts& hosts, double factor);

/// A client's measurement of one pair: its figure, a p50 in us or a
/// bandwidth in Gb/s by the check.
struct measurement {
  rank_pair pair;
  double figure = 0;
};

/// The slow pairs among a check's measurements, in rank order
/// (slow_pairs' rule), and the bar they were judged by.
std::vector<rank_pair> outliers(check c, const std::vector<measurement>& all, const verdict_options& o, fleet_bar& bar);

}  // namespace sweep
