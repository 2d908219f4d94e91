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

/// The bar `p` is judged by: its own from its ports' data rates
/// (--expect-gbps auto), else the matrix's; nullopt for none.
std::optional<double> bar_for(const matrix& m, const merged_pair& p);

/// report --rail: only the planes that have `rail` on either side are
/// kept, judged as they were (the rails' common bar), the counts, worst
/// hosts and rails made again. A usage error naming the rails when no
/// plane has it.
void keep_rail(matrix& m, const std::string& rail);

/// The report's verdict: ok when every pair passed.
fabric::verdict judge(const matrix& m);

/// The fewest hosts that account for the bad pairs, most bad pairs first:
/// a dead host among a thousand is named alone, not with each of its 999
/// peers; a bad link alone names neither end (its line does).
std::vector<std::pair<std::string, int>> worst_hosts(const matrix& m);

/// With rails: each rail with bad pairs and their count (a pair of two
/// rails counts for both), most first; a rail slower than its siblings
/// leads. Empty without rails.
std::vector<std::pair<std::string, int>> worst_rails(const matrix& m);


}  // namespace sweep
