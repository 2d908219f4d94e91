#pragma once
/// One process of the sweep: its pairs, round by round, and its document.

#include "fabric-sweep/rank/meetings.hpp"
#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/pair.hpp"
#include "fabric-sweep/rank/place.hpp"

#include "fabric/cli/console.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sweep {

/// One rail of this host as its lines give it (--rails), in the agreed order.
struct rail_line {
  std::string name;
  std::string address;  ///< empty when it has none
  std::string trouble;  ///< what keeps it off the sweep; empty when nothing
  std::optional<fabric::port_info> adapter;  ///< its port, when known
};

/// This rank's part: with --repeat, the last sweep's pairs (memory stays
/// constant however long it runs) and counts over all sweeps.
struct run_report {
  std::optional<place> where;
  std::optional<std::string> run;     ///< the run's identity, once known
  std::optional<double> start_us;     ///< the meeting before the first round
  std::vector<int> absent;            ///< ranks that did not come to it
  /// Ranks that said there what keeps them from RDMA, and what.
  std::vector<std::pair<int, std::string>> unable;
  /// The hosts this rank's rounds meet, when not every other host
  /// (--quick, --pairs): the report leaves the pairs no rank planned out.
  std::optional<std::vector<std::string>> peers;
  /// This host's port at its address, when known: the report compares the
  /// hosts' MTUs, judges pairs by their ports' rates (--expect-gbps auto)
  /// and finds the port in the subnet.
  std::optional<fabric::port_info> adapter;
  /// With --rails: this host's rails in the agreed order (adapter stays
  /// empty: no one port is the host's).
  std::optional<std::vector<rail_line>> rails;
  /// The bar the --pairs file carried from the run whose outliers it holds.
  std::optional<double> carried_bar;
  int round_count = 0;
  int retest_rounds = 0;          ///< the last sweep's
  std::optional<agreement> agreed;
  std::vector<pair_result> pairs;  ///< the last sweep's
  std::optional<double> elapsed_us;  ///< the last sweep's
  int sweeps = 0;                 ///< sweeps ended
  int failed_sweeps = 0;          ///< sweeps with a failed pair
};

/// This rank's sweep: its pairs, round by round.
fabric::verdict run(const options& opt, run_report& rep, fabric::console& con);
void to_json(nlohmann::json& j, const options& opt, const run_report& rep);

}  // namespace sweep
