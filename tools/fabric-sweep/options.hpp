#pragma once
/// fabric-sweep's command line: the options of a rank of the sweep, of
/// the report, of the health check and of discover, and the rules that
/// judge pairs.

#include "fabric-sweep/rank/checks.hpp"

#include "fabric/acm/acm.hpp"
#include "fabric/cli/cli.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sweep {

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
  int timeout_ms = 10000;       ///< --timeout: the longest any one wait may take
  std::optional<int> pair_timeout_ms;  ///< --pair-timeout: a pair's work once met (default --timeout)
  int retests = 1;              ///< --retests: extra meetings of each outlier pair
  int repeat = 1;               ///< --repeat: sweeps to run, 0 until interrupted
  int interval_ms = 0;          ///< --interval: from one sweep's start to the next's
  sweep::check check = check::ping;  ///< --check: what each pair checks
  std::string acm_service{fabric::acm::default_unix_path};  ///< --acm-service: the service of --check acm
  std::string group = "239.255.185.15";  ///< --group: the multicast group of --check multicast
  std::string rails;            ///< --rails: "auto", devices or address templates; empty: the address rule's one rail
  bool cross_rails = false;     ///< --cross-rails: every rail of a host with every rail of its peer
  bool intra = false;           ///< --intra: each host's own rails meet too, after the rounds (--check intra's mesh)

  /// The longest any one wait may take (--timeout, every tool's meaning).
  [[nodiscard]] std::chrono::milliseconds each_wait() const { return std::chrono::milliseconds(timeout_ms); }
  /// How long a pair may take once the two met, its every wait included.
  [[nodiscard]] std::chrono::milliseconds pair_timeout() const {
    return std::chrono::milliseconds(pair_timeout_ms.value_or(timeout_ms));
  }
};

/// Which of the verdict's options (verdict_options) a command line gave:
/// the report judges by the sweep's own, as its ranks' documents record
/// them, for the others. All given by default: judge by what is asked.
struct verdict_given {
  bool outlier_factor = true, bw_fraction = true, expect_gbps = true, expect_us = true;
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
  std::string rail;                ///< --rail R: the pairs of rail R only (judged with every rail's)
  /// --fabric FILE, once or twice: fabric documents (discover), the first
  /// taken before the sweep, the second after it.
  std::vector<std::string> fabric;
  std::string suspects_csv;        ///< --suspects-csv FILE: one row per suspect link
  verdict_given given;             ///< the verdict's options given after "report"
};

/// The values each verdict option takes, on a command line and in a rank's
/// document (the report reads them back from there).
struct option_range {
  double lo, hi;
  [[nodiscard]] constexpr bool holds(double v) const noexcept { return v >= lo && v <= hi; }
};
inline constexpr option_range outlier_factor_range{1.0, 1000.0};
inline constexpr option_range bw_fraction_range{0.001, 1.0};
inline constexpr option_range expect_gbps_range{0.001, 1e6};
inline constexpr option_range expect_us_range{0.001, 1e9};

/// What makes a pair slow (verdict.hpp): the run's re-tests and the
/// report's verdicts both judge by these.
struct verdict_options {
  double outlier_factor = 2.5;        ///< --outlier-factor: latency checks, times the healthy pairs' median
  double bw_fraction = 0.93;          ///< --bw-fraction: bw, of the healthy pairs' median
  std::optional<double> expect_gbps;  ///< --expect-gbps N: bw, the rate a pair should reach
  bool expect_gbps_auto = false;      ///< --expect-gbps auto: each pair's rate from its ports'
  std::optional<double> expect_us;    ///< --expect-us N: latency checks, the p50 a pair should have

  bool operator==(const verdict_options&) const = default;
};

/// A PCIe link as --expect-pcie states it: at least so many lanes, at
/// least such a generation; 0 where it says nothing ("x16", "gen4").
struct pcie_expectation {
  unsigned width = 0;
  unsigned generation = 0;
  bool operator==(const pcie_expectation&) const = default;
};

/// "x16gen4", "X16", "Gen4": --expect-pcie's words, read case-insensitively;
/// nullopt for anything else.
std::optional<pcie_expectation> pcie_expectation_of(std::string_view text);
/// The words back, as --expect-pcie takes them: "x16gen4", "x16", "gen4".
std::string pcie_expectation_text(const pcie_expectation& e);

/// What the health check expects of this host (NHC's check_hw_ib, and more).
struct health_options {
  std::vector<std::string> devices;        ///< --device: check these devices only (default: every device)
  std::optional<int> expect_ports;         ///< --expect-ports: Active ports the devices must have (default: all of theirs)
  std::optional<double> expect_rate_gbps;  ///< --expect-rate: an Active port below it fails
  std::string expect_width;                ///< --expect-width: "4X"; an Active port of another width fails
  std::string expect_speed;                ///< --expect-speed: "EDR"; an Active port of another speed fails
  std::optional<std::uint32_t> expect_mtu; ///< --expect-mtu: bytes; an Active port of another active MTU fails
  std::optional<pcie_expectation> expect_pcie;  ///< --expect-pcie: the PCIe link each device must have trained at
  bool no_intra = false;                   ///< --no-intra: no ping-pong between this host's rails
};

/// What `discover` reads of the subnet, and from where.
struct discover_options {
  std::string output;        ///< -o, --output FILE: the fabric document, written atomically
  std::string ca;            ///< --ca: the CA to walk from (default: the first with an Active InfiniBand port)
  std::optional<int> port;   ///< --port: its port (default: its first Active one)
  int timeout_ms = 1000;     ///< --timeout: each MAD's wait for its answer
  bool no_counters = false;  ///< --no-counters: nodes, links and tables only
};

/// What the command line asked for: a rank of a sweep, or a subcommand.
enum class mode { rank, report, health, discover };

struct options {
  fabric::cli::output_options out;
  run_options run;
  report_options report;
  verdict_options verdict;         ///< the run's re-tests and the report's verdict
  health_options health;
  discover_options discover;
  sweep::mode mode = mode::rank;
};

/// Declares the run options on `app` and the report and health subcommands.
void add_options(CLI::App& app, options& opt);
/// Checks what CLI11 cannot; throws a usage error.
void validate(const options& opt);
/// The options object of the document.
nlohmann::json options_json(const options& opt);

}  // namespace sweep
