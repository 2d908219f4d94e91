#pragma once
/// What a pair of hosts can check (--check): each check is one entry of
/// one table, with all that the run, the lines and the report know of it:
/// its word, what it runs, its defaults, what its human line says, and how
/// the report judges it. A new check is a new entry.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sweep {

/// The checks, in the order of the table.
enum class check { ping, connect, ud, acm, multicast, bw, intra };

struct pair_job;
struct pair_result;
struct run_options;

}  // namespace sweep

namespace fabric::cli {
class fields;
}

namespace sweep {

/// How the report judges a check's pairs (verdict.cpp).
enum class judged_by : std::uint8_t {
  time,       ///< by a p50 in us: slow far above the fleet's median
  bandwidth,  ///< by Gb/s: slow below a fraction of the fleet's best
  delivery,   ///< heard or not: no figure, a pair passes or fails
};

struct check_kind {
  check id;
  std::string_view name;     ///< the word of --check, of the JSON and of the report
  std::string_view summary;  ///< what it checks, for --check's help
  std::string_view measure;  ///< what the matrix's numbers are: "round-trip time"
  judged_by judged;
  bool in_rounds;            ///< false: every host at once, in one round of its own (run_group; intra: each host alone)
  int default_count;         ///< -C when not given; 0: it runs for a time instead
  int default_size;          ///< -S when not given
  int max_size;              ///< the largest -S it takes
  int default_duration_ms;   ///< --duration when not given, for a check that runs for a time; 0: none
  /// One side of one pair (nullptr for a check not in rounds): fills `out`'s
  /// measurements, throws fabric::error when the check failed.
  void (*run)(const pair_job& job, pair_result& out);
  /// Puts what the human line of a passed pair gives (after "round r: a
  /// <-> b: "), each figure through its field of pair.hpp: its JSON key
  /// and its words. `size` is the run's -S.
  void (*say)(fabric::cli::fields& line, const pair_result& p, std::uint64_t size);
};

/// Every check, in the order of the enum.
std::span<const check_kind> check_kinds() noexcept;
const check_kind& kind_of(check c) noexcept;

/// "ping", "connect", ...: the word of --check and of the JSON.
std::string_view check_name(check c) noexcept;
/// The check of a word, if it names one.
std::optional<check> check_of(std::string_view name) noexcept;
/// What the matrix's numbers measure: "round-trip time", ...
std::string_view check_measure(check c) noexcept;
/// Whether a check's figure is a bandwidth (higher is better) rather than a time.
bool measures_bandwidth(check c) noexcept;
/// A bandwidth in Gb/s as every human line, the table and the page print
/// it: one decimal from 10 up, two significant digits below (2.5, 0.47,
/// 0.047), so that a link far below its rate never reads 0.0.
std::string gbps_text(double gbps);

/// What each pair of the run does, the check's defaults filled in: -C
/// (nullopt for a check that runs for a time), -S, and how long it runs
/// (nullopt when it counts).
std::optional<int> pair_count(const run_options& r);
int pair_size(const run_options& r);
std::optional<int> pair_duration(const run_options& r);

}  // namespace sweep
