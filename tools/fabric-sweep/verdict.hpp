#pragma once
/// What makes a pair slow, by the rule of its check, in one place: rank
/// 0's choice of the pairs to re-test and the report's verdicts both judge
/// by it.
///
/// A pair is judged against a bar: a latency check's pair is slow above
/// it (us), a bw pair below it (Gb/s). The bar comes from what the fabric
/// should do when the admin says so (--expect-us, --expect-gbps N, or
/// --expect-gbps auto from each pair's ports), from the run whose outliers
/// a re-run meets again (a --pairs file's bar), or else from the fleet's
/// own figures: from its healthiest group of pairs, so that a degraded
/// group, even the larger part of the fleet, never moves the bar to itself.

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/checks.hpp"
#include "fabric-sweep/rank/rounds.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sweep {

/// The middle and spread of some figures.
struct spread {
  double median = 0, mad = 0;  ///< MAD: median absolute deviation
  std::size_t samples = 0;
};
spread spread_of(std::vector<double> figures);

/// The two hosts of each of a fleet's figures (any numbering of hosts).
using figure_hosts = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

/// Where a bar came from.
enum class bar_source : std::uint8_t {
  none,       ///< no bar: a delivery check, or too few pairs
  fleet,      ///< the fleet's healthiest group of pairs
  expected,   ///< --expect-us or --expect-gbps N
  ports,      ///< --expect-gbps auto: each pair's from its two ports' rates
  first_run,  ///< the run whose outliers a --pairs file holds
};
/// "fleet", "expected", "ports", "first_run"; "none".
std::string_view source_name(bar_source s) noexcept;

/// When the fleet's figures fall into two groups apart: the slower group
/// is slow.
struct fleet_split {
  std::size_t slower = 0, faster = 0;  ///< pairs in each group
  double slower_median = 0, faster_median = 0;
};

/// What a check's pairs are judged against.
struct fleet_bar {
  bar_source source = bar_source::none;
  /// The bar: latency slow above it (us), bw slow below it (Gb/s);
  /// nullopt for none, and for ports (each pair has its own: pair_bar).
  std::optional<double> value;
  /// fleet: the healthy group's median and spread (scaled MAD), its pairs,
  /// and the fleet's; first_run: the bar carried (value).
  spread group;
  std::size_t fleet_pairs = 0;
  std::optional<fleet_split> split;
  double outlier_factor = 0, bw_fraction = 0;  ///< the rule's factor or fraction, as judged
  std::optional<double> expected;              ///< expected: --expect-us or --expect-gbps
};

/// The facts of a port that say how fast a link can carry data: the
/// kernel's rate (Gb/s), its speed ("EDR", "QDR"...), its link layer
/// ("InfiniBand", "Ethernet") and active MTU in bytes.
struct port_rate {
  double rate_gbps = 0;
  std::string speed, link_layer;
  std::uint32_t mtu = 0;
};

/// The data rate a link of this port can carry in RDMA WRITEs, in Gb/s:
/// the kernel's rate, less the line encoding it counts in (8b/10b for
/// SDR, DDR and QDR: 0.8; 64b/66b for FDR; none for FDR10, EDR, HDR, NDR
/// and Ethernet, whose rates are data rates already), less each packet's
/// headers at the MTU (InfiniBand 26 bytes: LRH, BTH, ICRC, VCRC;
/// RoCE v2 82: Ethernet with its preamble and gap, IPv4, UDP, BTH,
/// ICRC). nullopt when the rate is unknown.
std::optional<double> data_rate_gbps(const port_rate& p);

/// The options a report judges by: each one its command line gave
/// (`given`, the values in `asked`), else the sweep's own when its ranks'
/// documents record them (`sweeps`), else the default (in `asked`): a
/// sweep run with --bw-fraction 0.5 is reported as it was judged.
verdict_options report_verdict(const verdict_options& asked, const verdict_given& given,
                               const std::optional<verdict_options>& sweeps);

/// The bar a check's pairs are judged by, from `fleet`, the figures of the
/// sweep's rounds (p50s in us, or bandwidths in Gb/s, one per pair; each
/// measured beside as many pairs as the others: a re-test runs beside
/// fewer, and is judged against the rounds' bar, not part of it), and
/// their hosts (none given: each figure a pair of its own hosts):
///
/// - expected: --expect-us N gives outlier_factor x N, --expect-gbps N
///   gives bw_fraction x N, whatever the fleet's figures;
/// - ports (--expect-gbps auto): each pair's own (pair_bar);
/// - carried: the bar a --pairs file carried (its first run's), when no
///   expectation is given;
/// - else the fleet's (fleet_bar_of).
fleet_bar bar_of(check c, const std::vector<double>& fleet, const verdict_options& o, const figure_hosts& hosts = {},
                 std::optional<double> carried = std::nullopt);

/// The fleet's own bar. The figures are taken on a log scale, a faster
/// pair higher (latency: its time's inverse); for latency checks only the
/// pairs between the fleet's typical hosts (typical_of). The healthy
/// group: all of them, split again and again in two by Otsu's method (the
/// cut that best separates a slower part from a faster one) while the
/// faster part holds three pairs or more, the two parts' medians are
/// farther apart than 2.5 + 20/sqrt(n) of their scaled MADs (n the pairs
/// split: noise alone never splits that far), and the slower part's
/// median is past the rule's ratio of the faster's (bw: below
/// --bw-fraction of it; latency: above --outlier-factor times it). The
/// group's median and its noise (the larger of its scaled MAD and its
/// faster half's deviation) make the bar:
///
/// - latency: slow above the higher of --outlier-factor times the
///   group's median and its median plus k times its noise;
/// - bw: slow below the lower of --bw-fraction of the group's median and
///   its median less k times its noise, but never below two thirds of the
///   fraction's bar;
/// - when the fleet split, the bar moves to between the two groups
///   (nearer the tighter, past every pair of the slower) if that flags
///   more: the whole slower group is slow;
///
/// where k = 2 + sqrt(2 ln N) + 4/sqrt(N), N the fleet's pairs: a little
/// past the deepest a fleet's noise reaches by chance (the last term for
/// the few pairs whose spread says little of it). Three pairs or more
/// make a fleet; with fewer there is no bar.
fleet_bar fleet_bar_of(check c, const std::vector<double>& fleet, const verdict_options& o,
                       const figure_hosts& hosts = {});

/// The bar of one pair whose two ports' data rates (data_rate_gbps) are
/// `a` and `b` (--expect-gbps auto): --bw-fraction of the lower.
double pair_bar(double a, double b, const verdict_options& o);

/// Whether a figure is slow by `bar` (a pair's own bar, for ports, in
/// `own`).
[[nodiscard]] bool is_slow(check c, double figure, const fleet_bar& bar, std::optional<double> own = std::nullopt);

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

/// The slow pairs among a check's measurements, in rank order, and the
/// bar they were judged by: bar_of's rule, with `carried` a --pairs
/// file's bar and `rates` each rank's port's data rate (ports; 0 unknown,
/// then the pair is judged by the fleet's bar).
std::vector<rank_pair> outliers(check c, const std::vector<measurement>& all, const verdict_options& o,
                                fleet_bar& bar, std::optional<double> carried = std::nullopt,
                                const std::vector<double>& rates = {});

/// A bar as a --pairs file carries it from the report that wrote it, so
/// that the re-run is judged by its first run: "#bar CHECK VALUE UNIT"
/// (unit "us" or "gbps"), a comment to any other reader.
std::string bar_line(check c, double value);
/// The bar of such a line for the check `c`, if `line` is one, its check
/// is `c` and its value within the options' ranges.
std::optional<double> bar_of_line(std::string_view line, check c);

}  // namespace sweep
