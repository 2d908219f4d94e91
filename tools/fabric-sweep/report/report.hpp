#pragma once
/// fabric-sweep report: what every host of a sweep printed, read line by
/// line (read/), merged into one matrix of pairs (merge/), judged
/// (judge/), with --fabric located on the subnet (locate/), and rendered
/// as a human table, a JSON document, an HTML page, gauges, CSV and a list
/// of pairs to run again (render/). This header is
/// the subcommand's; each stage has its own.

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/report/judge/judge.hpp"
#include "fabric-sweep/report/locate/join.hpp"
#include "fabric-sweep/report/merge/matrix.hpp"
#include "fabric-sweep/report/merge/merge.hpp"
#include "fabric-sweep/report/read/read.hpp"
#include "fabric-sweep/report/render/render.hpp"

#include "fabric/cli/console.hpp"

namespace sweep {

/// Merges and judges whole lines (any prefix before the first '{'
/// stripped, srun's pieces joined): the tests' and the fuzzer's way in.
matrix merge(const std::vector<std::string>& lines, const verdict_options& o,
             std::optional<check> only = std::nullopt, const verdict_given& given = {});
/// The same for several inputs (files), each read apart as the report
/// reads its files.
matrix merge_inputs(const std::vector<std::vector<std::string>>& inputs, const verdict_options& o,
                    std::optional<check> only = std::nullopt, const verdict_given& given = {});

/// The report subcommand's body: reads, merges, writes the files asked
/// for, prints the table (human output only).
fabric::verdict report(const options& opt, matrix& m, fabric::console& con);

}  // namespace sweep
