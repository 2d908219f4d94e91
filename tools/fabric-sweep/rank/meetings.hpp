#pragma once
/// Where the ranks meet rank 0 (meetings.cpp), and the lines they say
/// there (meeting_lines.cpp): before the first round, before the
/// multicast check's datagrams, and after the rounds to agree on the
/// pairs to meet again.

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/pair.hpp"
#include "fabric-sweep/rank/place.hpp"
#include "fabric-sweep/rank/presence.hpp"
#include "fabric-sweep/rank/rails.hpp"
#include "fabric-sweep/rank/rounds.hpp"
#include "fabric-sweep/verdict.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sweep {

/// A client's measurement of one meeting of a pair on rails (--rails).
struct rail_figure {
  measurement m;
  rail_meeting rails;
};

/// A pair to meet again on rails, and on which.
struct rail_retest {
  rank_pair pair;
  rail_meeting rails;
  bool operator==(const rail_retest&) const = default;
  auto operator<=>(const rail_retest&) const = default;
};

/// What rank 0 told every rank at a meeting: who came, and which pairs to re-test.
struct agreement {
  std::vector<rank_pair> retest;
  /// With --rails: each pair's meetings to re-test (`retest` holds their pairs).
  std::vector<rail_retest> retest_rails;
  spread fleet;                    ///< latency checks: the healthy pairs' (verdict.hpp)
  /// The bar the pairs were judged by, in the check's unit (bw: slow below
  /// it, in Gb/s; latency: slow above it, in us); nullopt when there was
  /// none, or each pair had its own (--expect-gbps auto).
  std::optional<double> bar;
  int ranks_heard = 0;  ///< rank 0: the ranks whose times it had, itself included
  std::string run;      ///< the run's identity, as rank 0 named it (the start)
  std::vector<int> present;  ///< the ranks rank 0 heard, itself included, in order
  /// The ranks that said what keeps their host from RDMA (a rank's
  /// trouble, at the start), in order: their pairs fail without a wait.
  std::vector<std::pair<int, std::string>> unable;
  /// The start, with --rails: the rails the ranks agreed on, and each
  /// rank's seat on each.
  std::optional<rail_plan> rails;
  std::string error;    ///< why there was none: rank 0 unreachable, ...
};

/// What a rank tells rank 0 at a meeting: its measurements, and at the
/// start what keeps its host from RDMA (empty: nothing).
struct rank_word {
  int rank = 0;
  std::vector<measurement> figures;
  std::string trouble;
  double rate_gbps = 0;  ///< its port's data rate (data_rate_gbps), 0 unknown: --expect-gbps auto's
  /// The start, with --rails: its rails, as it found them.
  std::optional<std::vector<rail_word>> rails{};
  /// With --rails: its figures, each of a meeting on rails (`figures` is
  /// empty), and each agreed rail's data rate (0 unknown).
  std::vector<rail_figure> rail_figures{};
  std::vector<double> rail_rates{};
};

/// What rank 0 judges the outliers by besides the options: the bar a
/// --pairs file carried from its first run, and this rank's port's data
/// rate (each rank tells its own: --expect-gbps auto).
struct judging {
  std::optional<double> carried;
  double own_rate_gbps = 0;
};

/// The longest trouble a rank may tell.
inline constexpr std::size_t max_trouble_bytes = 256;

/// The two messages of the agreement, one JSON line each: a rank's word to
/// rank 0, and rank 0's answer. The readers take what a peer sends for
/// untrusted: nullopt for anything but a well-formed line of n hosts (and,
/// after a start on rails, of `rails` rails: figures and re-tests name
/// theirs; 0 for a run of one rail).
std::string rank_line(int sweep, const rank_word& word);
std::optional<rank_word> read_rank_line(std::string_view line, int n, int sweep, int rails = 0);
std::string agreement_line(const agreement& a);
std::optional<agreement> read_agreement(std::string_view line, int n, int rails = 0);

/// The longest answer rank 0 may send n hosts: its rails' addresses grow
/// with the fleet.
std::size_t max_answer_bytes(int n);

/// After the rounds: every rank sends rank 0 what it measured (TCP, to
/// --port on rank 0's address); rank 0 waits for the ranks it met but
/// those `gone` knows left or stopped since, names the outliers and
/// answers each; a rank waits for the answer while rank 0 is not gone.
/// Every wait bounded; a failure is in agreement::error, never thrown
/// (but Ctrl-C). On `rails` rails (0: one), each meeting is measured and
/// named by its rails, and each rank tells its rails' rates (`rail_rates`).
agreement agree_on_outliers(const options& opt, const place& where, const std::vector<std::string>& addrs,
                            int sweep, const std::vector<pair_result>& mine, departures& gone, const judging& by = {},
                            int rails = 0, const std::vector<double>& rail_rates = {});

/// The outliers among the figures of meetings on rails, judged together
/// (a rail slower than its siblings is the finding): bar_of's rule, as
/// `outliers` judges one rail's, with `rates` each rank's rails' data
/// rates (ports).
std::vector<rail_retest> rail_outliers(check c, const std::vector<rail_figure>& all, const verdict_options& o,
                                       fleet_bar& bar, std::optional<double> carried = std::nullopt,
                                       const std::vector<std::vector<double>>& rates = {});

/// The same exchange as a meeting point: rank 0 waits for every rank (up
/// to 4 timeouts), then answers all it heard at once; the others wait for
/// that answer. The multicast check's start line.
agreement gather_everyone(const options& opt, const place& where, const std::vector<std::string>& addrs, int sweep);

/// The meeting before the first round, so that the launcher's skew is
/// never charged to a pair: as gather_everyone, and rank 0 names the run
/// (`run`), who came, and the ranks unable to take part (each rank tells
/// its `trouble`); with --rails, each rank tells its `rails` and rank 0
/// answers the plan (agree_rails).
agreement meet_at_start(const options& opt, const place& where, const std::vector<std::string>& addrs,
                        const std::string& run, const std::string& trouble,
                        const std::optional<std::vector<rail_word>>& rails = std::nullopt);

/// The run's identity: the Slurm job and step when srun launched it (every
/// rank knows it), else a name of rank 0's: its start time (UTC) and a
/// random number, so that later runs sort after earlier ones.
std::string new_run_id(const environment& env);

}  // namespace sweep
