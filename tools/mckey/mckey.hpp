#pragma once
// mckey: join a multicast group on one or more UD QPs, then send datagrams
// to it or count the ones that arrive; wire-compatible with rdma-core's mckey.

#include "fabric/cli.hpp"
#include "fabric/ud_report.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mckey {

struct options {
  fabric::cli::output_options out;
  std::string group;               // -m: IP multicast address
  std::string unmapped_group;      // -M: AF_IB MGID, needs -b
  bool sender = false;             // -s
  std::string bind;                // -b
  int connections = 1;             // -c: QPs
  int count = 10;                  // -C
  int size = 100;                  // -S
  std::string port_space_number;   // -p: 0x111 udp, 0x2 ipoib
  bool send_only = false;          // -o
  bool no_loopback = false;        // -l
  int timeout_ms = 10'000;         // --timeout: receivers' longest wait without progress
  int delay_ms = 3'000;            // --delay: sender's pause after joining, as the original's
  bool verify = false;             // --verify
  bool stats = false;              // --stats
};

void add_options(CLI::App& app, options& opt);

/// The usage problem of a parsed command line (what CLI11 cannot check), or nothing.
std::optional<std::string> usage_problem(const options& opt);

// state: pending, joined, failed; remote_qpn and qkey are the group's.
struct qp_result : fabric::ud_result {
  std::optional<std::string> dgid;
  std::optional<std::uint16_t> mlid;
  std::optional<std::uint8_t> sl;
  std::optional<double> join_ms;
  std::optional<bool> loopback_blocked;
};

struct report {
  std::string role = "none";       // sender, receiver
  std::string group;
  bool unmapped = false;
  std::string bind;
  int connections = 0, count = 0, size = 0;
  std::string port_space;
  bool send_only = false;
  bool no_loopback = false;
  int timeout_ms = 0;
  bool verify = false;
  std::optional<std::uint32_t> mtu;
  std::string link_layer;
  std::vector<qp_result> results;
  std::optional<double> elapsed_ms;  // the data phase
  std::string loopback_note;         // why -l could not be honoured

  [[nodiscard]] fabric::ud_totals totals() const { return fabric::totals(results); }
};

void to_json(nlohmann::json& j, const report& r);

/// "mckey: joined dgid: <gid> mlid 0x<mlid> sl <sl>", as the original prints it.
std::string joined_line(const qp_result& q);
/// Lines naming each QP that missed messages.
std::vector<std::string> loss_lines(const report& r);
/// The --stats summary lines.
std::vector<std::string> stats_lines(const report& r);
/// The verdict of a finished data phase.
std::pair<fabric::exit_code, std::string> verdict(const report& r);

fabric::exit_code run(const options& opt, report& rep);

}  // namespace mckey
