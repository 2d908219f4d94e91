#pragma once
/// fabric-sweep report: what every host of a sweep printed, read line by
/// line and merged into one matrix of pairs, judged, and rendered as a
/// human table, a JSON document, an HTML page, gauges, CSV and a list of
/// pairs to run again. Memory is for the pairs (a compact record each,
/// host indices, not names), never for the input text.

#include "fabric-sweep/checks.hpp"
#include "fabric-sweep/options.hpp"
#include "fabric-sweep/verdict.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/base/stats.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sweep {

// ---- reading lines (lines.cpp) -------------------------------------------

/// The longest line the report reads (a rank's document of some 40,000
/// hosts); a longer one is skipped and counted, never fatal.
inline constexpr std::size_t max_line_bytes = std::size_t{32} << 20;

/// What the line reader could not use, for the report's notes.
struct line_counts {
  std::size_t foreign = 0;    ///< lines that were not the sweep's (no JSON, another tool, pieces that never ended)
  std::size_t over_long = 0;  ///< lines (or joined pieces) longer than the limit
};

/// Cuts input into lines and hands on each JSON text whole: a label before
/// the first '{' (srun -l, clush, pdsh) is taken off, and srun's pieces of
/// a long line ("0: {...", "0: ...") are joined again, one waiting line per
/// label. A line longer than `max_line` is skipped to its end.
class line_joiner {
public:
  /// Receives each whole JSON text and the label it came with.
  using sink = std::function<void(std::string_view label, std::string_view json)>;
  explicit line_joiner(sink to, std::size_t max_line = max_line_bytes);
  ~line_joiner();
  line_joiner(const line_joiner&) = delete;
  line_joiner& operator=(const line_joiner&) = delete;

  /// Bytes of the input, as they come; lines may span calls.
  void feed(std::string_view bytes);
  /// The end of one input: a last line without '\n' is a line.
  void end_of_input();
  /// The end of all input: pieces still waiting never ended.
  void finish();
  [[nodiscard]] const line_counts& counts() const noexcept;

private:
  struct state;
  std::unique_ptr<state> s_;
};

/// Feeds a file descriptor to `to` until its end, waiting interruptibly
/// (Ctrl-C ends the read within a poll). Throws fabric::error(system) on
/// a read error.
void read_fd(int fd, line_joiner& to);

// ---- one line's word (reading.cpp) ---------------------------------------

/// A direction of a bw pair: the bytes written in `seconds`, and Gb/s.
struct direction_figures {
  std::uint64_t bytes = 0;
  double seconds = 0, gbps = 0;
};
/// A bw pair's two directions, each unmeasured (--unidirectional) or not.
struct bandwidth_figures {
  std::optional<direction_figures> client_to_server, server_to_client;
};

/// A run's id as a line gives it: no "run" key at all (a line of a version
/// before runs), null (a rank that could not learn it), or an id.
struct run_tag {
  enum class kind : std::uint8_t { absent, null, named } is = kind::absent;
  std::string_view id;
};

/// One side's word on one meeting of a pair, its strings in the line's
/// parse (valid until the next line is read).
struct side_record {
  std::string_view check, server, client, error;
  bool client_side = false, ok = false, retest = false;
  bool peer_absent = false;  ///< its failure is the peer's absence (false in lines of versions before it)
  std::uint32_t sweep = 1, round = 0;
  double elapsed_us = 0;
  std::optional<fabric::latency_summary> latency;
  std::optional<bandwidth_figures> bandwidth;
};

/// What one JSON text says that the report uses.
struct line_word {
  bool sweeps = false;            ///< a fabric-sweep line of any kind
  run_tag run;
  std::optional<double> time;     ///< an event's unix time
  std::vector<std::string_view> hosts;  ///< a rank's every host (its started event, its document)
  std::optional<double> sweep_us; ///< a rank's whole sweep (its document)
  std::vector<side_record> pairs; ///< its result event, or its document's results
  /// A rank's plan when it meets only some hosts (--quick, --pairs): its
  /// host and those peers; plan_host empty when it meets every other.
  std::string_view plan_host;
  std::vector<std::string_view> plan_peers;
  /// A rank's host and its port's MTU, from its started event.
  std::string_view mtu_host;
  std::optional<std::uint32_t> mtu;
  /// What a rank's document says it judged pairs by (its --outlier-factor,
  /// --bw-fraction and --expect-gbps), when every one is in range.
  std::optional<verdict_options> verdict;
  std::size_t malformed = 0;      ///< pair entries skipped for a wrong type or value
};

/// Reads JSON texts with simdjson (measured some 20 times faster than
/// parsing each line into nlohmann::json, and bounded in depth: no
/// recursion on hostile nesting). One reader, reused line after line.
class line_reader {
public:
  line_reader();
  ~line_reader();
  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;
  /// The line's word; `sweeps` false for text that is not JSON or not
  /// fabric-sweep's. Never throws for bad input.
  const line_word& read(std::string_view json);

private:
  struct state;
  std::unique_ptr<state> s_;
};

// ---- the matrix (merge.cpp) -----------------------------------------------

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
};

struct matrix {
  sweep::check check = check::ping;  ///< what the pairs checked
  std::vector<std::string> hosts;
  std::vector<merged_pair> pairs;    ///< every pair of hosts, in host order: (0,1), (0,2), ..., (1,2), ...
  std::vector<std::string> errors;   ///< the pairs' error texts, each once
  verdict_options verdict;           ///< the options the verdicts judged by (report_verdict)
  fleet_bar bar;                     ///< what the verdicts judged by
  /// The fewest hosts that account for the bad pairs, most bad pairs first
  /// (worst_hosts), each with its bad pairs.
  std::vector<std::pair<std::string, int>> worst;
  std::vector<std::string> notes;    ///< lines that could not be used, hosts that said nothing
  std::optional<double> sweep_us;    ///< the longest rank's whole sweep, when its document came through
  int rounds = 0;                    ///< rounds seen
  double rounds_slowest_us = 0;      ///< the sum of each round's slowest pair: the floor of rounds in lockstep
  run_choice run;
  std::size_t counts[5] = {};        ///< pairs by state

  [[nodiscard]] std::size_t count(pair_state s) const noexcept { return counts[static_cast<int>(s)]; }
  /// The pairs the run meant to meet: all but the unplanned.
  [[nodiscard]] std::size_t planned() const noexcept { return pairs.size() - count(pair_state::unplanned); }
  /// The pair of hosts i and k (i != k), in O(1); index_of: its place in pairs.
  [[nodiscard]] const merged_pair& pair_of(std::size_t i, std::size_t k) const noexcept;
  [[nodiscard]] std::size_t index_of(std::size_t i, std::size_t k) const noexcept;
  /// A pair's error text ("" none), "every re-test failed: " in front when so.
  [[nodiscard]] std::string error_of(const merged_pair& p) const;
  /// Whether any pair has latency figures (not bw, not multicast), that
  /// the fleet's median and MAD are made of.
  [[nodiscard]] bool latency_measured() const noexcept;
  /// Each host's bad pairs, by host index.
  [[nodiscard]] std::vector<int> bad_pairs_by_host() const;
};

/// Builds the matrix from line after line: the pairs of `only` (default:
/// the check of the first pair line), the others counted in a note; of
/// those, the latest run's (a run starts at its earliest line's time; a
/// line whose run is null joins the latest run when it is no older than
/// that run's start; lines without a run key are one unnamed run); within
/// the run each pair's latest sweep of --repeat, the best of its re-tests.
class matrix_builder {
public:
  explicit matrix_builder(std::optional<check> only = std::nullopt);
  ~matrix_builder();
  matrix_builder(const matrix_builder&) = delete;
  matrix_builder& operator=(const matrix_builder&) = delete;

  /// One JSON text, and the label it came with (a rank's stream).
  void add(std::string_view label, std::string_view json);
  /// The matrix, judged by the options `asked`, but for those not
  /// `given`: the ones the kept run's ranks judged by (report_verdict).
  /// `lines` are the reader's counts.
  matrix finish(const verdict_options& asked, const line_counts& lines = {}, const verdict_given& given = {});

private:
  struct state;
  std::unique_ptr<state> s_;
};

/// Merges whole lines (any prefix before the first '{' stripped, srun's
/// pieces joined): the tests' and the fuzzer's way in.
matrix merge(const std::vector<std::string>& lines, const verdict_options& o,
             std::optional<check> only = std::nullopt, const verdict_given& given = {});

/// The report's verdict: ok when every pair passed.
fabric::verdict judge(const matrix& m);
/// The report's document: its options, every pair, the summary.
/// The report's document but its results, which each_result hands over
/// one at a time as the document is written.
void to_json(nlohmann::json& j, const options& opt, const matrix& m);
void each_result(const matrix& m, const fabric::result_sink& sink);

// ---- the worst hosts (worst_hosts.cpp) -----------------------------------

/// The fewest hosts that account for the bad pairs, most bad pairs first:
/// a dead host among a thousand is named alone, not with each of its 999
/// peers; a bad link alone names neither end (its line does).
std::vector<std::pair<std::string, int>> worst_hosts(const matrix& m);

/// For a bw matrix judged by the fleet (no --expect-gbps): a note when its
/// slow pairs take more hosts to explain than a few bad links would (their
/// cover, and a host for each link left, over a quarter of the hosts), with
/// the spread of `fleet`, the passing pairs' figures.
std::optional<std::string> spread_note(const matrix& m, std::vector<double> fleet, const verdict_options& o);

// ---- renderings (table.cpp, html.cpp, prometheus.cpp, csv.cpp, rerun.cpp) --

/// Hosts up to which the page and the human table draw every pair's cell;
/// above it, the page draws an overview of groups and a table of the bad
/// pairs, and the human output its summary lines alone.
inline constexpr std::size_t cells_up_to = 100;
/// Failed and re-tested pairs the human output names, each kind; the rest
/// are counted (--csv and -j list every pair).
inline constexpr std::size_t pair_lines_up_to = 100;

/// The human table, a cell per ordered pair, in O(pairs), and the lines
/// that name the failed, re-tested and worst.
std::string format_matrix(const matrix& m);

/// Groups of hosts for the page's overview: a switch's, or a name prefix's.
struct host_group {
  std::string name;
  std::vector<std::uint32_t> hosts;  ///< indices into matrix::hosts
};
/// From Slurm's topology.conf text: each leaf switch (SwitchName=... Nodes=
/// host list) a group, in the file's order, hosts of the matrix only; the
/// matrix's hosts no switch names are one group "(no switch)". Throws a
/// usage error for a Nodes= list that does not expand.
std::vector<host_group> groups_of_topology(std::string_view conf, const std::vector<std::string>& hosts);
/// By host-name prefix (the name without its last run of digits) when that
/// gives 2 to 64 groups, else in blocks of consecutive hosts.
std::vector<host_group> groups_of_names(const std::vector<std::string>& hosts);

/// What the page tells besides the matrix.
struct page_context {
  std::string options;    ///< the options in force, as text
  std::string generated;  ///< when the report was made (UTC)
  std::vector<host_group> groups;  ///< the overview's groups (default: by name)
};
/// A self-contained HTML page: an SVG heat map, or the overview above
/// cells_up_to hosts. No network fetches.
std::string html_page(const matrix& m, const page_context& ctx = {});

/// node_exporter's textfile-collector format: per-host aggregates and the
/// bad pairs; with `every_pair`, every pair's series too.
std::string prometheus_text(const matrix& m, bool every_pair = false);

/// One row per pair (RFC 4180, a header row).
std::string csv_text(const matrix& m);

/// The slow and failed pairs as ClusterKit's custom-mode pairs file:
/// `ROUND HOSTA HOSTB` lines, rounds from 1, no host twice in a round
/// (retest_rounds' packing), under a '#' header.
std::string rerun_text(const matrix& m);

// ---- the subcommand (report.cpp) -------------------------------------------

/// The report subcommand's body: reads, merges, writes the files asked
/// for, prints the table (human output only).
fabric::verdict report(const options& opt, matrix& m, fabric::console& con);

}  // namespace sweep
