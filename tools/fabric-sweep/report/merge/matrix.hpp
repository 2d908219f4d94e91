#pragma once
/// The matrix every later stage works on: one compact record per pair of
/// hosts (host indices, not names), its final word, and what the run was.

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/report/locate/locate.hpp"
#include "fabric-sweep/report/read/read.hpp"
#include "fabric-sweep/verdict.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace sweep {

/// unplanned: a pair no rank's rounds met by plan (--quick, --pairs) and
/// none met: not judged, not listed in the JSON, the CSV or the gauges.
enum class pair_state : std::uint8_t { ok, slow, failed, missing, unplanned };
/// "ok", "slow", "failed", "missing": the word of the JSON and the gauges.
std::string_view state_name(pair_state s) noexcept;
/// Slow, failed or missing: what fails the report and marks its hosts.
[[nodiscard]] constexpr bool is_bad(pair_state s) noexcept {
  return s == pair_state::slow || s == pair_state::failed || s == pair_state::missing;
}

/// One pair of the matrix: its final word, from its two sides' lines.
struct merged_pair {
  std::uint32_t a = 0, b = 0;     ///< host indices, a before b in the host order
  pair_state state = pair_state::missing;
  bool a_served = true;           ///< a listened, b connected (the directions of bw)
  bool every_retest_failed = false;
  std::uint16_t retests = 0;      ///< extra meetings seen; their best stands
  std::uint16_t plane = 0;        ///< matrix::planes[plane]: the rails it met on
  std::uint32_t round = 0;
  std::uint32_t sweep = 0;        ///< the latest sweep that met it (1 the first; 0 missing)
  std::uint32_t error = 0;        ///< matrix::errors[error - 1]; 0 none
  double elapsed_us = 0;          ///< the longer of its two sides
  std::optional<double> first_p50_us;  ///< the sweep's round, when re-tested
  std::variant<std::monostate, fabric::latency_summary, bandwidth_figures> figures;

  [[nodiscard]] const fabric::latency_summary* latency() const noexcept;
  /// bw: a's bandwidth to b, and b's to a, when measured.
  [[nodiscard]] std::optional<direction_figures> a_to_b() const noexcept;
  [[nodiscard]] std::optional<direction_figures> b_to_a() const noexcept;
  /// The figure a verdict judges: a latency check's p50 (us), or a bw
  /// pair's lower direction (Gb/s).
  [[nodiscard]] std::optional<double> figure() const noexcept;
};

/// The run whose lines the matrix holds, and what was left out.
struct run_choice {
  std::optional<std::string> id;     ///< the kept run's id (nullopt: lines without one)
  std::optional<double> started;     ///< its earliest line's unix time
  std::size_t earlier_runs = 0;      ///< runs left out, each older than the kept one
  std::size_t earlier_lines = 0;     ///< their lines
  /// Runs left out that started after the kept one but have no pair lines
  /// of the check (a sweep under way, or another check's), their lines,
  /// and their ids (those that have one, as printable_utf8 gives them).
  std::size_t later_runs = 0, later_lines = 0;
  std::vector<std::string> later_ids;
};

/// The rails a plane of pairs met on: host a's (the earlier in the host
/// order) and host b's; the same rail but with --cross-rails. Without
/// rails, the one plane has neither.
struct rail_plane {
  std::string a_rail, b_rail;
  [[nodiscard]] bool operator==(const rail_plane&) const = default;
  /// "rail mlx5_0", "rails mlx5_0 to mlx5_1"; "" without rails.
  [[nodiscard]] std::string name() const;
};

/// What the locating found on the fabric (report --fabric): the links
/// that explain the bad pairs, and those with evidence of their own.
struct fabric_findings {
  locate::location found;   ///< its suspects, worst first (explained_by handed on to suspect_of)
  /// For each pair of the matrix: the suspect that explains it
  /// (locate::no_suspect: none); empty when there is no suspect.
  std::vector<std::uint32_t> suspect_of;
  std::size_t documents = 0;       ///< fabric documents read: 1, or 2 (counters compared)
  std::size_t hosts = 0;           ///< the matrix's hosts looked for; with rails, their rails' adapters
  bool rails = false;              ///< the ends looked for are hosts' rails' adapters
  std::size_t pairs_left_out = 0;  ///< missing pairs, not judged: not located

  /// The suspect that explains pair `i` of the matrix, if one does.
  [[nodiscard]] const locate::suspect* explaining(std::size_t i) const noexcept {
    if (i >= suspect_of.size() || suspect_of[i] == locate::no_suspect) return nullptr;
    return &found.suspects[suspect_of[i]];
  }
};

struct matrix {
  sweep::check check = check::ping;  ///< what the pairs checked
  std::vector<std::string> hosts;
  /// every pair of hosts, in host order: (0,1), (0,2), ..., (1,2), ...;
  /// with rails, so every plane's, plane after plane
  std::vector<merged_pair> pairs;
  std::vector<rail_plane> planes{rail_plane{}};  ///< at least one
  std::vector<std::string> errors;   ///< the pairs' error texts, each once
  verdict_options verdict;           ///< the options the verdicts judged by (report_verdict)
  fleet_bar bar;                     ///< what the verdicts judged by
  /// The fewest hosts that account for the bad pairs, most bad pairs first
  /// (worst_hosts), each with its bad pairs.
  std::vector<std::pair<std::string, int>> worst;
  std::vector<std::pair<std::string, int>> worst_rails;  ///< with rails: each rail's bad pairs, most first
  std::vector<std::string> notes;    ///< lines that could not be used, hosts that said nothing
  std::optional<double> sweep_us;    ///< the longest rank's whole sweep, when its document came through
  int rounds = 0;                    ///< rounds seen
  double rounds_slowest_us = 0;      ///< the sum of each round's slowest pair: the floor of rounds in lockstep
  run_choice run;
  std::size_t counts[5] = {};        ///< pairs by state (count_states)
  /// The merge's word to the judge, who takes it: the figures of the
  /// latest sweep's rounds (not its re-tests), that the fleet's bar is made
  /// of, and for latency checks their pairs' hosts (typical_of).
  std::vector<double> round_figures;
  figure_hosts round_hosts;
  /// What the run's rank documents say they judged by (the first one's),
  /// and whether another said otherwise.
  std::optional<verdict_options> sweeps_verdict;
  bool sweeps_disagree = false;
  /// The bar a --pairs file carried from the run whose outliers it holds
  /// (its ranks' documents and events say it), for this check.
  std::optional<double> carried_bar;
  /// Each host's port, when its lines said it (its started event), and
  /// the data rate the judge takes from it (data_rate_gbps).
  std::vector<std::optional<port_rate>> ports;
  std::vector<std::optional<double>> data_rates;
  /// Each host's port in the InfiniBand subnet, as its lines said it (its
  /// adapter, else its pair lines): what finds it on a fabric document.
  std::vector<port_ids> subnet_ports;
  /// With --rails, each host's rails' ports as its lines said them (its
  /// started event's or document's rails): what finds a rail's adapter.
  struct rail_port {
    std::string host, rail, device;
    port_ids ids;
  };
  std::vector<rail_port> rail_ports;
  /// The locate stage's findings; nullopt without --fabric.
  std::optional<fabric_findings> located;

  [[nodiscard]] std::size_t count(pair_state s) const noexcept { return counts[static_cast<int>(s)]; }
  /// A report of the fabric alone: --fabric, and no pairs in the input.
  [[nodiscard]] bool fabric_check() const noexcept { return located && hosts.size() < 2; }
  /// The pairs the run meant to meet: all but the unplanned.
  [[nodiscard]] std::size_t planned() const noexcept { return pairs.size() - count(pair_state::unplanned); }
  /// The pair of hosts i and k (i != k) on a plane, in O(1); index_of:
  /// its place in pairs.
  [[nodiscard]] const merged_pair& pair_of(std::size_t i, std::size_t k, std::size_t plane = 0) const noexcept;
  [[nodiscard]] std::size_t index_of(std::size_t i, std::size_t k, std::size_t plane = 0) const noexcept;
  /// Whether the pairs met on rails (--rails): planes have names.
  [[nodiscard]] bool has_rails() const noexcept;
  /// The rails' names, each once, in the planes' order.
  [[nodiscard]] std::vector<std::string> rail_names() const;
  /// The pairs a plane holds: every pair of the hosts.
  [[nodiscard]] std::size_t plane_size() const noexcept { return hosts.size() < 2 ? 0 : hosts.size() * (hosts.size() - 1) / 2; }
  /// A pair's error text ("" none), "every re-test failed: " in front when so.
  [[nodiscard]] std::string error_of(const merged_pair& p) const;
  /// Whether any pair has latency figures (not bw, not multicast), that
  /// the fleet's median and MAD are made of.
  [[nodiscard]] bool latency_measured() const noexcept;
  /// Counts the pairs by state again (after a stage changed some).
  void count_states() noexcept;
  /// Each host's bad pairs, by host index.
  [[nodiscard]] std::vector<int> bad_pairs_by_host() const;
};

}  // namespace sweep
