#pragma once
/// The report's third stage: the matrix's pairs judged (verdict.hpp's
/// rules), the hosts that explain the bad ones, and the report's verdict.

#include "fabric-sweep/report/merge/matrix.hpp"

#include "fabric/base/error.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sweep {

/// Judges the merged matrix's pairs by the options `asked`, but for those
/// not `given`: the ones the kept run's ranks judged by (report_verdict).
/// Passing pairs past the bar become slow; the worst hosts are named and
/// the notes on the verdict added. Takes the matrix's round figures.
void judge_pairs(matrix& m, const verdict_options& asked, const verdict_given& given = {});

/// The report's verdict: ok when every pair passed.
fabric::verdict judge(const matrix& m);

/// The fewest hosts that account for the bad pairs, most bad pairs first:
/// a dead host among a thousand is named alone, not with each of its 999
/// peers; a bad link alone names neither end (its line does).
std::vector<std::pair<std::string, int>> worst_hosts(const matrix& m);

/// For a bw matrix judged by the fleet (no --expect-gbps): a note when its
/// slow pairs take more hosts to explain than a few bad links would (their
/// cover, and a host for each link left, over a quarter of the hosts), with
/// the spread of `fleet`, the passing pairs' figures.
std::optional<std::string> spread_note(const matrix& m, std::vector<double> fleet, const verdict_options& o);

}  // namespace sweep
