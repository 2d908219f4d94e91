#pragma once
/// ib_acme: tests the ibacm service (address and path resolution, counters,
/// endpoints), generates its configuration files, and probes which of its
/// options fit this host. A drop-in superset of rdma-core's ib_acme.

#include "options.hpp"

#include "fabric/acm/acm.hpp"
#include "fabric/cli/cli.hpp"
#include "fabric/acm/sa.hpp"
#include "fabric/base/stats.hpp"
#include "fabric/base/wait_limit.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ib_acme {

/// The direct SA check of one path (-v with an InfiniBand port).
struct sa_check {
  bool checked = false;                ///< false: no port could ask the SA
  std::string reason;                  ///< why not checked, or the query's failure
  std::string device;                  ///< the port that asked: "mlx5_0", empty when none
  unsigned port = 0;                   ///< and its number
  std::optional<fabric::acm::path_record> record;   ///< what the SA returned
  /// A differing field; `wide` for a 64-bit GID half, which the JSON writes
  /// as a hex string (format_guid): an integer above 2^53 loses digits in JS and jq.
  struct mismatch { std::string field; std::uint64_t acm = 0, sa = 0; bool wide = false; };
  std::vector<mismatch> mismatches;
  [[nodiscard]] bool match() const { return checked && record && mismatches.empty(); }
  /// "mlx5_0/1", as the human output names the port.
  [[nodiscard]] std::string where() const;
};

/// One source x destination lookup.
struct lookup {
  std::string service;
  std::string dest;
  std::string source;                   ///< as given, empty when none
  char format = 'u';
  bool ok = false;
  std::string status;                   ///< ACM status name of the last reply ("SUCCESS", "ENODATA")
  std::string error;                    ///< why it failed, empty when ok
  std::string source_used;              ///< the source the service chose
  std::optional<fabric::acm::path_record> path;
  std::optional<bool> verified;         ///< -v: the service's SA check
  std::string verify_error;
  std::optional<sa_check> sa;           ///< -v: our own SA check
  fabric::latency_stats times;          ///< one sample per repetition (with --stats or JSON)
  std::optional<double> last_us;        ///< the last repetition's time; empty when untimed
  double elapsed_s = 0;
};

/// One counter set (-P).
struct perf_result {
  std::string service;
  std::string endpoint;                 ///< "all", "N", or the source address
  std::vector<std::uint64_t> counters;
};

/// One endpoint row (-e).
struct endpoint_result {
  std::string service;
  int ep_index = 0;
  fabric::acm::ep_reply data;
};

/// A service contacted.
struct service_result {
  std::string service;
  bool connected = false;
  std::string error;
};

/// A generated file (-A, -O).
struct file_result {
  std::string kind;                     ///< "addr" or "opts"
  std::string path;
};

/// What a run produced; rendered by to_json and printed as it goes.
struct report {
  std::vector<service_result> services;
  std::vector<lookup> results;
  std::vector<perf_result> perf;
  std::vector<endpoint_result> endpoints;
  std::vector<file_result> files;
  std::optional<nlohmann::json> probe;
  int return_status = 0;                ///< what the original would print as "return status"
};

/// The options object of the JSON document.
nlohmann::json options_json(const options& opt);

/// -f's letter as a word: ip, name, lid, gid.
std::string_view format_name(char f);

/// Each kind of results item: kind, index (per kind), ok, error and its own fields.
nlohmann::json result_json(const lookup& l, std::size_t index);
nlohmann::json result_json(const service_result& s, std::size_t index);
nlohmann::json result_json(const perf_result& p, std::size_t index);
nlohmann::json result_json(const endpoint_result& e, std::size_t index);
nlohmann::json result_json(const file_result& f, std::size_t index);
/// One of the probe's option verdicts as a "check" item.
nlohmann::json check_json(const nlohmann::json& verdict, std::size_t index);

/// The document's role, options, results and summary.
void to_json(nlohmann::json& j, const options& opt, const report& r);

/// JSON of a path record (every field decoded).
nlohmann::json path_json(const fabric::acm::path_record& p);

/// The --stats line of a lookup: its repetitions, their rate and latency.
std::string format_lookup_stats(const lookup& l);

/// The original's "Path information" block.
std::string format_path(const fabric::acm::path_record& p);

/// A GUID or another 64-bit identifier as the JSON writes it: "0x" and 16
/// hex digits (a number that large loses digits in JavaScript and jq).
std::string format_guid(std::uint64_t v);

/// The fields of a path that a direct SA answer must agree on.
std::vector<sa_check::mismatch> compare_paths(const fabric::acm::path_record& acm, const fabric::acm::path_record& sa);

/// Runs everything the options ask for; fills `r` as it goes.
fabric::verdict run(const options& opt, report& r, fabric::console& con);

// ---- configuration files (config.cpp) ----------------------------------

/// The ibacm_opts.cfg text the original writes.
std::string opts_file_text();

/// A local port, as -A names it.
struct local_port {
  std::string device;
  unsigned port = 0;
  bool active = false;
};

/// The ibacm_addr.cfg text for these ports and host name (the part of it
/// before the first dot).
std::string addr_file_text(const std::string& host_name, const std::vector<local_port>& ports);

/// The local verbs ports, as fabric::all_ports lists them (a device that
/// cannot be opened is left out); no_device when there are none.
std::vector<local_port> list_local_ports();

/// Writes `text` to dir/name (or to name when it is absolute) with
/// fabric::write_file_atomically; creates dir (mode 0755) if absent.
/// Returns the path written. Throws fabric::error.
std::string write_config(const std::string& dir, const std::string& name, const std::string& text);

// ---- probe (probe.cpp) --------------------------------------------------

/// The ACM option probe: ports, SA, which options can work, providers.
nlohmann::json probe(const options& opt);

/// The probe's human table.
std::string format_probe(const nlohmann::json& p);

}  // namespace ib_acme
