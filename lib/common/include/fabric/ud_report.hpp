#pragma once
/// What udaddy and mckey report of each UD QP in a test: how it ended, its
/// message counts, the lines naming its losses, and the verdict on them.

#include "fabric/error.hpp"

#include <nlohmann/json_fwd.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabric {

/// One UD QP's part in a test; a tool's per-QP result derives from it.
struct ud_result {
  std::size_t index = 0;
  std::string state = "pending";   ///< pending, the tool's word for ready (connected, joined), or failed
  std::string error;               ///< why it failed
  std::optional<std::uint32_t> qpn, remote_qpn, qkey;
  std::uint64_t expected = 0;      ///< messages this QP waits for
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t verify_errors = 0;

  [[nodiscard]] std::uint64_t lost() const noexcept { return received < expected ? expected - received : 0; }
  /// Marks the QP failed for `e`; false when it had failed already.
  bool fail(const fabric::error& e);
};

/// Sums over a test's QPs.
struct ud_totals {
  std::uint64_t expected = 0, sent = 0, received = 0, lost = 0, verify_errors = 0;
};

template <std::derived_from<ud_result> R>
ud_totals totals(const std::vector<R>& results) {
  ud_totals t;
  for (const ud_result& r : results) {
    t.expected += r.expected;
    t.sent += r.sent;
    t.received += r.received;
    t.lost += r.lost();
    t.verify_errors += r.verify_errors;
  }
  return t;
}

/// The lines for one QP that lost messages or failed verification, each
/// starting with `who` and its index ("udaddy: connection 3: ..."); none
/// when all arrived intact.
std::vector<std::string> loss_lines(std::string_view who, const ud_result& r);

/// loss_lines of every QP in state `ready`.
template <std::derived_from<ud_result> R>
std::vector<std::string> loss_lines(std::string_view who, std::string_view ready, const std::vector<R>& results) {
  std::vector<std::string> lines;
  for (const ud_result& r : results)
    if (r.state == ready)
      for (auto& line : loss_lines(who, r)) lines.push_back(std::move(line));
  return lines;
}

/// The verdict on the counts: ok, or test_failed naming the loss or the
/// verification failures.
std::pair<exit_code, std::string> loss_verdict(const ud_totals& t);

/// Which counts a result's JSON shows: a mckey sender receives nothing, a
/// receiver sends nothing; udaddy's QPs do both.
struct ud_counts_shown {
  bool sent = true;
  bool received = true;   ///< with expected and lost
  bool verify = false;    ///< verify_errors, when --verify
};

/// A result's common members as JSON: index, state, error, qpn,
/// remote_qpn, qkey and the counts `shown`.
void to_json(nlohmann::json& j, const ud_result& r, ud_counts_shown shown);
/// The totals as JSON members of `j`, the counts `shown`.
void add_totals(nlohmann::json& j, const ud_totals& t, ud_counts_shown shown);

}  // namespace fabric
