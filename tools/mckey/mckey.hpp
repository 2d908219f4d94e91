#pragma once
/// mckey: join a multicast group on one or more UD QPs, then send datagrams
/// to it or count the ones that arrive; wire-compatible with rdma-core's mckey.

#include "options.hpp"

#include "fabric/cli/cli.hpp"
#include "fabric/cli/ud_report.hpp"
#include "fabric/base/wait_limit.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mckey {

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
