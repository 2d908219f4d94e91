// The report's verdict on the judged matrix.
#include "fabric-sweep/report/judge/judge.hpp"

#include <fmt/format.h>

namespace sweep {

namespace {

/// When the verdict took an option of the check from the sweep's ranks
/// and it differs from the report's own value, or the ranks disagreed: a
/// note saying so, for a reader who compares the report with rank 0's
/// verdict or with another report.
std::optional<std::string> judged_by_note(check c, const verdict_options& asked, const verdict_given& given,
                                          const std::optional<verdict_options>& sweeps, bool differently) {
  if (!sweeps) return std::nullopt;
  std::vector<std::string> taken;
  if (kind_of(c).judged == judged_by::time && !given.outlier_factor && sweeps->outlier_factor != asked.outlier_factor)
    taken.push_back(fmt::format("--outlier-factor {}", sweeps->outlier_factor));
  if (kind_of(c).judged == judged_by::bandwidth) {
    if (!given.bw_fraction && sweeps->bw_fraction != asked.bw_fraction)
      taken.push_back(fmt::format("--bw-fraction {}", sweeps->bw_fraction));
    if (!given.expect_gbps && sweeps->expect_gbps != asked.expect_gbps)
      taken.push_back(sweeps->expect_gbps ? fmt::format("--expect-gbps {}", *sweeps->expect_gbps)
                                          : std::string("no --expect-gbps"));
  }
  if (taken.empty() && !differently) return std::nullopt;
  std::string text = taken.empty() ? std::string("judged by the sweep's own options")
                                   : fmt::format("judged by the sweep's own {}", fmt::join(taken, ", "));
  if (differently) text += " (its ranks' documents disagree: the first one's stand)";
  return text + "; an option given to the report judges otherwise";
}

}  // namespace

void judge_pairs(matrix& m, const verdict_options& asked, const verdict_given& given) {
  m.verdict = report_verdict(asked, given, m.sweeps_verdict);
  const auto& o = m.verdict;
  // Slow pairs, by the rule of the check (the run's re-tests use it too).
  m.bar = bar_of(m.check, m.round_figures, o, m.round_hosts);
  figure_hosts().swap(m.round_hosts);
  for (auto& p : m.pairs)
    if (auto f = p.figure(); f && p.state == pair_state::ok && is_slow(m.check, *f, m.bar)) p.state = pair_state::slow;
  m.count_states();
  m.worst = worst_hosts(m);
  if (auto note = spread_note(m, std::move(m.round_figures), o)) m.notes.push_back(std::move(*note));
  if (auto note = judged_by_note(m.check, asked, given, m.sweeps_verdict, m.sweeps_disagree))
    m.notes.push_back(std::move(*note));
}

fabric::verdict judge(const matrix& m) {
  if (m.hosts.size() < 2) return {fabric::exit_code::test_failed, "no pair results in the input"};
  auto failed = m.count(pair_state::failed), slow = m.count(pair_state::slow), missing = m.count(pair_state::missing);
  if (failed + slow + missing == 0) return {};
  return {fabric::exit_code::test_failed,
          fmt::format("{} failed, {} slow, {} missing of {} pairs", failed, slow, missing, m.planned())};
}

}  // namespace sweep
