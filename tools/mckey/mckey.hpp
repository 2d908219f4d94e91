#pragma once
/// mckey: join a multicast group on one or more UD QPs, then send datagrams
/// to it or count the ones that arrive; wire-compatible with rdma-core's mckey.

#include "fabric/cli/cli.hpp"
#include "fabric/cli/ud_report.hpp"
#include "fabric/base/wait_limit.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mckey {

/// Command-line options (the original's short flags, uniform long names).
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
  fabric::wait_limit timeout{std::chrono::milliseconds(10'000)};  // --timeout
  int delay_ms = 3'000;            // --delay: sender's pause after joining, as the original's
  bool verify = false;             // --verify
  bool stats = false;              // --stats
};

void add_options(CLI::App& app, options& opt);

/// Checks the options as a whole (the group, the port space); throws a
/// usage error.
void validate(const options& opt);

/// The options in force as the document's options object.
nlohmann::json options_json(const options& opt);

/// One QP; state: pending, joined, failed; remote_qpn and qkey are the
/// group's, setup_us the join time.
struct qp_result : fabric::ud_result {
  std::optional<std::string> dgid;
  std::optional<std::uint16_t> mlid;
  std::optional<std::uint8_t> sl;
  std::optional<bool> loopback_blocked;
};

/// What a run produced.
struct report {
  std::string role = "none";       ///< sender, receiver
  std::optional<std::uint32_t> mtu;
  std::string link_layer;
  std::uint32_t size = 0;          ///< -S: bytes of each message
  std::vector<qp_result> results;
  std::optional<double> elapsed_us;  ///< the data phase

  [[nodiscard]] fabric::ud_totals totals() const {
    auto t = fabric::totals(results, "joined");
    t.size = size;
    return t;
  }
};

/// A QP as an item of results (and of a result event).
nlohmann::json result_json(const qp_result& q);

/// The document's role, options, results and summary.
void to_json(nlohmann::json& j, const options& opt, const report& r);

/// "mckey: joined dgid: <gid> mlid 0x<mlid> sl <sl>", as the original prints it.
std::string joined_line(const qp_result& q);
/// Lines naming each QP that missed messages.
std::vector<std::string> loss_lines(const report& r);
/// The --stats summary lines.
std::vector<std::string> stats_lines(const report& r);
/// The verdict of a finished data phase.
fabric::verdict judge(const report& r);

/// Joins, then sends or receives; fills `rep` as it goes.
fabric::verdict run(const options& opt, report& rep, fabric::console& con);

}  // namespace mckey
