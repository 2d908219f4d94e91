#pragma once
/// fabric-sweep: checks every pair of hosts of a cluster in rounds. Every
/// process of the sweep runs the same command under an existing launcher
/// (srun, clush, pdsh) and works out its own part; `fabric-sweep report`
/// merges what they all printed into one matrix; `fabric-sweep health`
/// checks one host for a node health checker.

#include "fabric/acm.hpp"
#include "fabric/cli.hpp"
#include "fabric/rc_bandwidth.hpp"
#include "fabric/stats.hpp"
#include "fabric/ud.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sweep {

// ---- options (options.cpp) ----------------------------------------------

/// What each pair checks (--check): an RC ping-pong's round trips, RC
/// connection setup, a UD ping-pong's round trips and loss, each side's
/// ACM lookups of the other, (all hosts at once, no rounds) whether each
/// hears the other's datagrams in one multicast group, or RDMA WRITE
/// bandwidth in each direction.
enum class check { ping, connect, ud, acm, multicast, bw };

/// "ping", "connect", "ud": the word of --check and of the JSON.
std::string_view check_name(check c) noexcept;
/// The check of a word, if it names one.
std::optional<check> check_of(std::string_view name) noexcept;
/// What the matrix's numbers measure: "round-trip time", ...
std::string_view check_measure(check c) noexcept;

struct run_options {
  std::string hosts;            ///< --hosts: host list; default Slurm's node list
  std::optional<int> rank;      ///< --rank: default from Slurm, or our host name in the list
  std::string address = "{host}";  ///< --address: template of each host's RDMA address
  std::string address_file;     ///< --address-file: "host address" lines
  int port = 18515;             ///< --port: the first round's rdma_cm port
  std::optional<int> count;     ///< -C: pings, connections, datagrams, lookups or writes per pair (pair_count)
  std::optional<int> size;      ///< -S: bytes per ping, datagram or write (pair_size)
  std::optional<int> duration_ms;  ///< --duration: how long each direction writes (bw; pair_duration)
  bool unidirectional = false;  ///< --unidirectional: bw from the client (higher rank) to the server only
  bool quick = false;           ///< --quick: one round, the lower half of the hosts against the upper
  std::string pairs_file;       ///< --pairs: the pairs to meet, 'host host' or 'round host host' lines
  int timeout_ms = 10000;       ///< --timeout: bound on each pair
  int retests = 1;              ///< --retests: extra meetings of each outlier pair
  int repeat = 1;               ///< --repeat: sweeps to run, 0 until interrupted
  int interval_ms = 0;          ///< --interval: from one sweep's start to the next's
  sweep::check check = check::ping;  ///< --check: what each pair checks
  std::string acm_service{fabric::acm::default_unix_path};  ///< --acm-service: the service of --check acm
  std::string group = "239.255.185.15";  ///< --group: the multicast group of --check multicast
};

struct report_options {
  std::vector<std::string> files;  ///< input files; none: stdin
  std::string check;               ///< --check: the check to report (default: the first pair line's)
  std::string html;                ///< --html FILE
  std::string prometheus;          ///< --prometheus FILE (report and health)
  bool prometheus_pairs = false;   ///< --prometheus-pairs: every pair's series, not only the bad ones
  std::string csv;                 ///< --csv FILE: one row per pair
  std::string outliers;            ///< --outliers FILE: the bad pairs as ROUND HOSTA HOSTB lines
  std::string topology;            ///< --topology FILE: Slurm's topology.conf, the page's groups
};

/// What makes a pair slow (outliers.cpp): the run's re-tests and the
/// report's verdicts both judge by these.
struct verdict_options {
  double outlier_factor = 2.5;        ///< --outlier-factor: latency checks, times the fleet's median
  double bw_fraction = 0.93;          ///< --bw-fraction: bw, of the fleet's 90th percentile
  std::optional<double> expect_gbps;  ///< --expect-gbps: bw, an absolute floor
};

/// What the command line asked for: a rank of a sweep, or a subcommand.
enum class mode { rank, report, health };

struct options {
  fabric::cli::output_options out;
  run_options run;
  report_options report;
  verdict_options verdict;         ///< the run's re-tests and the report's verdict
  sweep::mode mode = mode::rank;
};

/// What each pair of the run does, the check's defaults filled in: -C
/// (nullopt for a bw check that writes for a time), -S, and how long a bw
/// check's writes last (nullopt when it counts them).
std::optional<int> pair_count(const run_options& r);
int pair_size(const run_options& r);
std::optional<int> pair_duration(const run_options& r);

/// Declares the run options on `app` and the report and health subcommands.
void add_options(CLI::App& app, options& opt);
/// Checks what CLI11 cannot; throws a usage error.
void validate(const options& opt);
/// The options object of the document.
nlohmann::json options_json(const options& opt);

// ---- schedule (schedule.cpp) --------------------------------------------

/// One pair of a round: the lower rank serves, the higher connects.
struct pairing {
  int server = 0, client = 0;
  int slot = 0;  ///< its place in the round, for its port
};

/// A pair by its ranks, the server's (lower) first.
using rank_pair = std::pair<int, int>;

/// The circle method: every host meets every other exactly once, busy with
/// one peer per round; n - 1 rounds for even n, n for odd (a bye each).
std::vector<std::vector<pairing>> rounds(int n);

/// ClusterKit's quick mode: one round, rank i with rank i + n/2 (the
/// lower half of the hosts against the upper half).
std::vector<std::vector<pairing>> quick_round(int n);

/// Rounds that meet each pair once, each host busy with one peer a round:
/// each pair in the first round where both its hosts are free.
std::vector<std::vector<pairing>> pack_rounds(std::vector<rank_pair> pairs);

/// The rounds of a --pairs file (`text`, named `name` in errors):
/// 'HOST HOST' lines, packed into rounds, or 'ROUND HOST HOST' lines (as
/// ClusterKit's custom mode writes them), in the order of their numbers;
/// '#' comments and blank lines. An unknown host, a host paired with
/// itself, a pair named twice, a host twice in one round, a line that
/// does not parse, or a file of both forms is a usage error naming the line.
std::vector<std::vector<pairing>> rounds_from_file(std::string_view text, std::string_view name,
                                                   const std::vector<std::string>& hosts);

/// The rdma_cm port of a pair: distinct among the pairs of a round and
/// of the rounds near it, so that a late client never reaches another
/// round's server. Ports above `base` are taken round after round and
/// used again from `base` once they run out.
int pair_port(int base, int n, int round, const pairing& p);
/// Rounds apart before a pair's port comes round again.
int port_cycle(int base, int n);

/// Where this process stands: its rank among all hosts, and how that was found.
struct place {
  int rank = 0;
  std::vector<std::string> hosts;
  std::string source;  ///< "slurm", "hosts", "rank"
};

/// The environment as a map (for tests); from_environ() reads the process's.
using environment = std::map<std::string, std::string>;
environment from_environ();

/// The hosts from --hosts, else from the Slurm step's node list
/// (SLURM_STEP_NODELIST, else the job's; one task per node); the rank
/// from --rank, else our own host name's place in --hosts, else
/// SLURM_PROCID (srun's tasks each named in --hosts). A host named twice
/// is a usage error, as is anything it cannot tell.
place find_place(const run_options& o, const environment& env, const std::string& host_name);

/// "node01" of "node01.cluster": a host's name before its first dot.
std::string short_name(const std::string& host);

/// The place of `name` in `hosts`: the same name, else the same short name.
std::optional<int> host_index(const std::vector<std::string>& hosts, const std::string& name);

/// Each host's RDMA address: from --address-file, else --address with
/// {host} replaced (and {short}, the name before its first dot).
std::vector<std::string> addresses(const run_options& o, const std::vector<std::string>& hosts);

// ---- run (run.cpp) ------------------------------------------------------

/// One pair as one side saw it.
struct pair_result {
  sweep::check check = check::ping;
  int sweep = 0;                ///< which sweep of --repeat (0 the first)
  int round = 0;
  bool retest = false;          ///< an extra meeting of an outlier pair
  int server_rank = 0, client_rank = 0;
  std::string server, client;   ///< host names
  std::string role;             ///< which side this is: server, client
  int port = 0;
  bool ok = false;
  std::string error;
  std::optional<fabric::latency_summary> latency;  ///< client side: round trips, or connection setup
  std::optional<double> connect_us;
  double elapsed_us = 0;        ///< the pair on this side, waiting for the peer included
  std::uint64_t pings = 0;      ///< round trips completed (ping, ud)
  std::optional<std::uint64_t> connections;  ///< connections made (connect)
  std::optional<std::uint64_t> sent, lost;   ///< datagrams (ud; lost: client side)
  std::optional<std::uint64_t> lookups;      ///< ACM lookups answered (acm)
  std::optional<fabric::transfer> client_to_server, server_to_client;  ///< bw: each direction, as its writer measured it
};

/// A bw pair's figure: its lower measured direction, in Gb/s; nullopt for
/// other checks, or before its figures came.
std::optional<double> lower_gbps(const pair_result& p);

// ---- outliers (outliers.cpp, agree.cpp) ----------------------------------

/// The schedule of this run's rounds: every pair, --quick's one round, or
/// the --pairs file's rounds.
std::vector<std::vector<pairing>> schedule_of(const run_options& r, const place& where);

/// The fleet's middle and spread of p50 round-trip times.
struct spread {
  double median = 0, mad = 0;  ///< MAD: median absolute deviation
  std::size_t samples = 0;
};
spread spread_of(std::vector<double> p50s);

/// Whether a check's figure is a time (lower is better: p50 in us) or a
/// bandwidth (higher is better: Gb/s).
bool measures_bandwidth(check c) noexcept;

/// What the figures were judged against.
struct fleet_bar {
  spread fleet;                      ///< latency checks: the pairs' p50s
  double outlier_factor = 0;         ///< latency checks: the factor of the median judged by
  std::optional<double> best_gbps;   ///< bw: the 90th percentile (nearest rank) of the pairs' figures
  double bw_fraction = 0;            ///< bw: the fraction of best_gbps a pair must reach
  std::optional<double> expect_gbps; ///< bw: the absolute floor asked for
  /// bw: the figure below which a pair is slow (the higher of the two
  /// floors); nullopt when neither applies.
  [[nodiscard]] std::optional<double> bar_gbps() const;
};

/// The rule of each check, in one place: a latency check's pair is slow
/// above `outlier_factor` times the fleet's median p50 and 3 scaled MADs
/// above it (judged with three pairs or more, so that noise and a fleet
/// of two are not outliers); a bw pair is slow below `bw_fraction` of the
/// fleet's 90th percentile (three pairs or more), or below `expect_gbps`.
/// `figures` are p50s in us or bandwidths in Gb/s, one per pair; returns
/// the indices of the slow ones, ascending, and the bar in `bar`.
std::vector<std::size_t> slow_pairs(check c, const std::vector<double>& figures, const verdict_options& o,
                                    fleet_bar& bar);

/// A client's measurement of one pair: its figure, a p50 in us or a
/// bandwidth in Gb/s by the check.
struct measurement {
  rank_pair pair;
  double figure = 0;
};

/// The slow pairs among a check's measurements, in rank order
/// (slow_pairs' rule), and the bar they were judged by.
std::vector<rank_pair> outliers(check c, const std::vector<measurement>& all, const verdict_options& o, fleet_bar& bar);

/// What rank 0 told every rank at a meeting: who came, and which pairs to re-test.
struct agreement {
  std::vector<rank_pair> retest;
  spread fleet;                    ///< latency checks
  std::optional<double> bar_gbps;  ///< bw: the figure below which a pair was slow
  int ranks_heard = 0;  ///< rank 0: the ranks whose times it had, itself included
  std::string run;      ///< the run's identity, as rank 0 named it (the start)
  std::vector<int> present;  ///< the ranks rank 0 heard, itself included, in order
  std::string error;    ///< why there was none: rank 0 unreachable, ...
};

/// The two messages of the agreement, one JSON line each: a rank's
/// measurements to rank 0, and rank 0's answer. The readers take what a
/// peer sends for untrusted: nullopt for anything but a well-formed line
/// of n hosts.
std::string measurements_line(int rank, int sweep, const std::vector<measurement>& mine);
std::optional<std::pair<int, std::vector<measurement>>> read_measurements(std::string_view line, int n, int sweep);
std::string agreement_line(const agreement& a);
std::optional<agreement> read_agreement(std::string_view line, int n);

/// After the rounds: every rank sends rank 0 what it measured (TCP, to
/// --port on rank 0's address); rank 0 waits for the ranks it met, names
/// the outliers and answers each. Every wait bounded; a failure is in
/// agreement::error, never thrown (but Ctrl-C).
agreement agree_on_outliers(const options& opt, const place& where, const std::vector<std::string>& addrs,
                            int sweep, const std::vector<pair_result>& mine);

/// The same exchange as a meeting point: rank 0 waits for every rank (up
/// to 4 timeouts), then answers all it heard at once; the others wait for
/// that answer. The multicast check's start line.
agreement gather_everyone(const options& opt, const place& where, const std::vector<std::string>& addrs, int sweep);

/// The meeting before the first round, so that the launcher's skew is
/// never charged to a pair: as gather_everyone, and rank 0 names the run
/// (`run`) and who came.
agreement meet_at_start(const options& opt, const place& where, const std::vector<std::string>& addrs,
                        const std::string& run);

/// The run's identity: the Slurm job and step when srun launched it (every
/// rank knows it), else a name of rank 0's: its start time (UTC) and a
/// random number, so that later runs sort after earlier ones.
std::string new_run_id(const environment& env);

/// This rank's part: with --repeat, the last sweep's pairs (memory stays
/// constant however long it runs) and counts over all sweeps.
struct run_report {
  std::optional<place> where;
  std::optional<std::string> run;     ///< the run's identity, once known
  std::optional<double> start_us;     ///< the meeting before the first round
  std::vector<int> absent;            ///< ranks that did not come to it
  int round_count = 0;
  int retest_rounds = 0;          ///< the last sweep's
  std::optional<agreement> agreed;
  std::vector<pair_result> pairs;  ///< the last sweep's
  std::optional<double> elapsed_us;  ///< the last sweep's
  int sweeps = 0;                 ///< sweeps ended
  int failed_sweeps = 0;          ///< sweeps with a failed pair
};

/// One side of one pair's check (checks.cpp): the server side listens on
/// `port` and answers, the client side dials `peer_addr` and measures (for
/// acm, each side looks up `peer_addr` alone), meeting its peer by
/// bounds.meet and ending within bounds.work of the meeting; fills `out`'s
/// measurements, throws fabric::error when the check failed.
void run_check(const run_options& r, bool serving, const std::string& peer_addr, int port,
               const fabric::pair_bounds& bounds, pair_result& out);

/// The multicast check of one sweep (checks.cpp): this rank joins
/// --group, meets every rank at rank 0 (gather_everyone), sends its
/// datagrams and counts everyone's; one result per peer, in rank order.
/// `met` is what the meeting said.
std::vector<pair_result> run_group(const options& opt, const place& where, const std::vector<std::string>& addrs,
                                   int sweep, agreement& met);

/// A pair line: one side's word on one pair, with the run it belongs to.
nlohmann::json pair_json(const pair_result& p, std::size_t index, const std::optional<std::string>& run);
/// This rank's sweep: its pairs, round by round.
fabric::verdict run(const options& opt, run_report& rep, fabric::console& con);
void to_json(nlohmann::json& j, const options& opt, const run_report& rep);

// ---- health (health.cpp) ------------------------------------------------

/// One host, as a node health checker asks: its RDMA ports and an RC
/// ping-pong with itself over its own address.
struct health_report {
  std::string address;                         ///< this host's, by the address rule
  std::vector<fabric::port_info> ports;
  std::optional<pair_result> self;             ///< the self-connection, once tried
};

/// The health subcommand's body: ok when a port is Active and the
/// self-connection passed.
fabric::verdict health(const options& opt, health_report& rep, fabric::console& con);
void to_json(nlohmann::json& j, const options& opt, const health_report& rep);
/// The host's health as node_exporter textfile-collector gauges (prometheus.cpp).
std::string prometheus_text(const health_report& rep, const fabric::verdict& v);

}  // namespace sweep
