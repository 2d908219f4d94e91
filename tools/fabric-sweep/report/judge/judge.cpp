// The judge: the merged matrix's pairs against their bar (verdict.hpp's
// rules), the notes that say what they were judged by and what the slow
// pairs have in common, and the report's verdict.
#include "fabric-sweep/report/judge/judge.hpp"

#include "fabric/base/text.hpp"
#include "fabric/cli/cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>

namespace sweep {

namespace {

std::string expect_gbps_words(const verdict_options& v) {
  if (v.expect_gbps_auto) return "--expect-gbps auto";
  return v.expect_gbps ? fmt::format("--expect-gbps {}", *v.expect_gbps) : std::string("no --expect-gbps");
}

/// When the verdict took an option of the check from the sweep's ranks
/// and it differs from the report's own value, or the ranks disagreed: a
/// note saying so, for a reader who compares the report with rank 0's
/// verdict or with another report.
std::optional<std::string> judged_by_note(check c, const verdict_options& asked, const verdict_given& given,
                                          const std::optional<verdict_options>& sweeps, bool differently) {
  if (!sweeps) return std::nullopt;
  std::vector<std::string> taken;
  if (kind_of(c).judged == judged_by::time) {
    if (!given.outlier_factor && sweeps->outlier_factor != asked.outlier_factor)
      taken.push_back(fmt::format("--outlier-factor {}", sweeps->outlier_factor));
    if (!given.expect_us && sweeps->expect_us != asked.expect_us)
      taken.push_back(sweeps->expect_us ? fmt::format("--expect-us {}", *sweeps->expect_us) : std::string("no --expect-us"));
  }
  if (kind_of(c).judged == judged_by::bandwidth) {
    if (!given.bw_fraction && sweeps->bw_fraction != asked.bw_fraction)
      taken.push_back(fmt::format("--bw-fraction {}", sweeps->bw_fraction));
    if (!given.expect_gbps &&
        (sweeps->expect_gbps != asked.expect_gbps || sweeps->expect_gbps_auto != asked.expect_gbps_auto))
      taken.push_back(expect_gbps_words(*sweeps));
  }
  if (taken.empty() && !differently) return std::nullopt;
  std::string text = taken.empty() ? std::string("judged by the sweep's own options")
                                   : fmt::format("judged by the sweep's own {}", fmt::join(taken, ", "));
  if (differently) text += " (its ranks' documents disagree: the first one's stand)";
  return text + "; an option given to the report judges otherwise";
}

/// A figure with its unit, as the notes give it.
std::string figure_words(check c, double v) {
  return measures_bandwidth(c) ? gbps_text(v) + " Gb/s" : fmt::format("{:.1f} us", v);
}

/// The fleet fell into two groups apart: how far, in a reader's words.
std::string split_note(check c, const fleet_split& s) {
  auto total = s.slower + s.faster;
  if (measures_bandwidth(c))
    return fmt::format("the fleet splits in two: {} of {} pairs run at {:.0f}% of the other {} ({} against {}); the "
                       "slower are judged slow",
                       s.slower, total, 100 * s.slower_median / s.faster_median, s.faster,
                       figure_words(c, s.slower_median), figure_words(c, s.faster_median));
  return fmt::format("the fleet splits in two: {} of {} pairs take {:.1f} times as long as the other {} ({} against "
                     "{}); the slower are judged against the faster",
                     s.slower, total, s.slower_median / s.faster_median, s.faster, figure_words(c, s.slower_median),
                     figure_words(c, s.faster_median));
}

/// Names a few hosts of a group: "a, b, c and 7 more".
std::string some_names(const matrix& m, const std::vector<std::uint32_t>& hosts) {
  constexpr std::size_t names_up_to = 8;
  std::string out;
  for (std::size_t i = 0; i < hosts.size() && i < names_up_to; ++i)
    out += fmt::format("{}{}", i == 0 ? "" : ", ", fabric::printable(m.hosts[hosts[i]]));
  if (hosts.size() > names_up_to) out += fmt::format(" and {} more", hosts.size() - names_up_to);
  return out;
}

/// When the hosts fall into groups that pass among themselves and are
/// slow or failed with every host of another group (a switch's uplink, a
/// link between two halves of the fabric): a note naming them, since the
/// worst hosts would name one side's hosts for the link they share.
std::optional<std::string> groups_note(const matrix& m, std::size_t plane) {
  auto n = m.hosts.size();
  if (n < 4 || m.count(pair_state::slow) + m.count(pair_state::failed) == 0) return std::nullopt;
  auto first = m.pairs.begin() + static_cast<std::ptrdiff_t>(plane * m.plane_size());
  std::span<const merged_pair> pairs(first, first + static_cast<std::ptrdiff_t>(m.plane_size()));
  // The groups of hosts that passing pairs join.
  std::vector<std::uint32_t> root(n);
  std::iota(root.begin(), root.end(), 0u);
  auto find = [&](std::uint32_t h) {
    while (root[h] != h) h = root[h] = root[root[h]];
    return h;
  };
  for (const auto& p : pairs)
    if (p.state == pair_state::ok) root[find(p.a)] = find(p.b);
  std::vector<std::vector<std::uint32_t>> members(n);
  for (std::uint32_t h = 0; h < n; ++h) members[find(h)].push_back(h);
  std::vector<std::uint32_t> group_of(n, UINT32_MAX);
  std::vector<std::vector<std::uint32_t>> groups;
  for (auto& g : members)
    if (g.size() >= 2) {
      for (auto h : g) group_of[h] = static_cast<std::uint32_t>(groups.size());
      groups.push_back(std::move(g));
    }
  if (groups.size() < 2) return std::nullopt;
  // Every judged pair between two groups must be bad, and every group met
  // another: a plan of some pairs (--quick) leaves the groups apart
  // without a pair between them, which says nothing of a link.
  std::vector<bool> crossed(groups.size(), false);
  for (const auto& p : pairs) {
    auto ga = group_of[p.a], gb = group_of[p.b];
    if (ga == UINT32_MAX || gb == UINT32_MAX || ga == gb || p.state == pair_state::unplanned) continue;
    if (!is_bad(p.state) || p.state == pair_state::missing) return std::nullopt;
    crossed[ga] = crossed[gb] = true;
  }
  if (std::find(crossed.begin(), crossed.end(), false) != crossed.end()) return std::nullopt;
  std::sort(groups.begin(), groups.end(), [](const auto& x, const auto& y) { return x.size() < y.size(); });
  auto on = m.has_rails() ? m.planes[plane].name() + ": " : std::string();
  if (groups.size() == 2)
    return on + fmt::format("{} pass with each other and the other {} hosts with each other, but every pair between the "
                       "two groups is slow or failed: a link those pairs share (a switch's uplink), not a host",
                       some_names(m, groups[0]), groups[1].size());
  std::string named;
  for (std::size_t g = 0; g + 1 < groups.size(); ++g)
    named += fmt::format("{}{} ({})", g == 0 ? "" : "; ", some_names(m, groups[g]), groups[g].size());
  return on + fmt::format("the hosts fall into {} groups, each passing within itself, every pair between two groups slow "
                     "or failed: {}; and the other {} hosts: the links between the groups (switches' uplinks), not the "
                     "hosts",
                     groups.size(), named, groups.back().size());
}

}  // namespace

std::optional<double> bar_for(const matrix& m, const merged_pair& p) {
  if (m.bar.source == bar_source::ports && p.a < m.data_rates.size() && p.b < m.data_rates.size() &&
      m.data_rates[p.a] && m.data_rates[p.b])
    return pair_bar(*m.data_rates[p.a], *m.data_rates[p.b], m.verdict);
  return m.bar.value;
}

void judge_pairs(matrix& m, const verdict_options& asked, const verdict_given& given) {
  m.verdict = report_verdict(asked, given, m.sweeps_verdict);
  const auto& o = m.verdict;
  // An expectation given to the report or the sweep judges over a bar the
  // run carried from its first run.
  m.bar = bar_of(m.check, m.round_figures, o, m.round_hosts, m.carried_bar);
  figure_hosts().swap(m.round_hosts);
  m.data_rates.assign(m.hosts.size(), std::nullopt);
  for (std::size_t h = 0; h < m.hosts.size() && h < m.ports.size(); ++h)
    if (m.ports[h]) m.data_rates[h] = data_rate_gbps(*m.ports[h]);
  std::size_t by_fleet = 0;
  for (auto& p : m.pairs) {
    auto f = p.figure();
    if (!f || p.state != pair_state::ok) continue;
    auto bar = bar_for(m, p);
    if (m.bar.source == bar_source::ports && !(m.data_rates[p.a] && m.data_rates[p.b])) ++by_fleet;
    if (bar && (measures_bandwidth(m.check) ? *f < *bar : *f > *bar)) p.state = pair_state::slow;
  }
  m.count_states();
  m.worst = worst_hosts(m);
  m.worst_rails = worst_rails(m);
  if (m.bar.split && m.bar.source == bar_source::fleet) m.notes.push_back(split_note(m.check, *m.bar.split));
  if (m.check != check::intra)  // an intra matrix's ends meet only their own host's
    for (std::size_t plane = 0; plane < m.planes.size(); ++plane)
      if (auto note = groups_note(m, plane)) m.notes.push_back(std::move(*note));
  if (m.bar.source == bar_source::ports)
    m.notes.push_back(fmt::format(
        "judged by each pair's ports (--expect-gbps auto): slow below --bw-fraction {} of the lower port's data rate{}",
        o.bw_fraction,
        by_fleet == 0 ? std::string()
                      : fmt::format("; {} {} without both ports' rates judged by the fleet's bar", by_fleet,
                                    by_fleet == 1 ? "pair" : "pairs")));
  if (m.bar.source == bar_source::first_run && m.bar.value)
    m.notes.push_back(fmt::format("judged by the first run's bar, slow {} {}, that the --pairs file carried; an "
                                  "expectation (--expect-us, --expect-gbps) judges otherwise",
                                  measures_bandwidth(m.check) ? "below" : "above", figure_words(m.check, *m.bar.value)));
  std::vector<double>().swap(m.round_figures);
  if (auto note = judged_by_note(m.check, asked, given, m.sweeps_verdict, m.sweeps_disagree))
    m.notes.push_back(std::move(*note));
}

void keep_rail(matrix& m, const std::string& rail) {
  std::vector<std::uint16_t> kept_as(m.planes.size(), UINT16_MAX);
  std::vector<rail_plane> planes;
  for (std::size_t i = 0; i < m.planes.size(); ++i)
    if (m.planes[i].a_rail == rail || m.planes[i].b_rail == rail) {
      kept_as[i] = static_cast<std::uint16_t>(planes.size());
      planes.push_back(m.planes[i]);
    }
  if (planes.empty()) {
    std::vector<std::string> names;
    for (const auto& r : m.rail_names()) names.push_back(fabric::printable_utf8(r));
    fabric::cli::usage_error(fmt::format("--rail {}: {}", fabric::printable(rail),
                                         names.empty() ? std::string("the lines have no rails (a sweep without --rails)")
                                                       : fmt::format("the lines' rails are {}", fmt::join(names, ", "))));
  }
  std::erase_if(m.pairs, [&](const merged_pair& p) { return kept_as[p.plane] == UINT16_MAX; });
  for (auto& p : m.pairs) p.plane = kept_as[p.plane];
  m.planes = std::move(planes);
  m.count_states();
  m.worst = worst_hosts(m);
  m.worst_rails = worst_rails(m);
  m.notes.push_back(fmt::format("only {} is reported (--rail), judged by every rail's common bar",
                                fabric::printable_utf8(rail)));
}

fabric::verdict judge(const matrix& m) {
  // With --fabric, a suspect link fails the report as a bad pair does.
  std::string suspects;
  if (m.located && !m.located->found.suspects.empty()) {
    const auto& found = m.located->found.suspects;
    suspects = fmt::format("{} suspect link{} on the fabric, the first {}", found.size(), found.size() == 1 ? "" : "s",
                           locate::link_name(found.front()));
  }
  if (m.fabric_check()) {
    if (suspects.empty()) return {};
    return {fabric::exit_code::test_failed, suspects};
  }
  if (m.hosts.size() < 2) return {fabric::exit_code::test_failed, "no pair results in the input"};
  auto failed = m.count(pair_state::failed), slow = m.count(pair_state::slow), missing = m.count(pair_state::missing);
  if (failed + slow + missing == 0) {
    if (suspects.empty()) return {};
    return {fabric::exit_code::test_failed, "every pair passed, but " + suspects};
  }
  return {fabric::exit_code::test_failed, fmt::format("{} failed, {} slow, {} missing of {} pairs{}", failed, slow, missing,
                                                      m.planned(), suspects.empty() ? "" : "; " + suspects)};
}

}  // namespace sweep
