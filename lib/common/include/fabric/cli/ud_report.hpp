#pragma once
/// What udaddy and mckey report of each UD QP in a test: how it ended, its
/// message counts, the lines naming its losses, the verdict on them, and
/// the end of a test as the originals print it.

#include "fabric/cli/console.hpp"
#include "fabric/cli/fields.hpp"
#include "fabric/base/error.hpp"
#include "fabric/base/stats.hpp"

#include <nlohmann/json.hpp>

#include <concepts>
#include <cstdint>
#include <functional>
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
  std::uint64_t oversize = 0;      ///< datagrams longer than the agreed size, dropped
  std::optional<double> setup_us;  ///< connection or join time

  [[nodiscard]] std::uint64_t lost() const noexcept { return received < expected ? expected - received : 0; }
  /// Marks the QP failed for `e`; false when it had failed already.
  bool fail(const fabric::error& e);
};

/// Sums over a test's QPs.
struct ud_totals {
  std::uint64_t expected = 0, sent = 0, received = 0, lost = 0, verify_errors = 0, oversize = 0;
  std::uint32_t size = 0;  ///< bytes of each message (-S), to name what was oversize
  std::size_t failed = 0;  ///< QPs whose item is not ok
  latency_stats setup;     ///< connection or join times
};

/// Whether a QP's item is ok: ready, nothing lost, nothing corrupt.
bool item_ok(const ud_result& r, std::string_view ready);

template <std::derived_from<ud_result> R>
ud_totals totals(const std::vector<R>& results, std::string_view ready) {
  ud_totals t;
  for (const ud_result& r : results) {
    t.expected += r.expected;
    t.sent += r.sent;
    t.received += r.received;
    t.lost += r.lost();
    t.verify_errors += r.verify_errors;
    t.oversize += r.oversize;
    t.failed += item_ok(r, ready) ? 0 : 1;
    if (r.setup_us) t.setup.add(*r.setup_us);
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

/// The warning for a QP that dropped datagrams longer than the `size`
/// bytes agreed (-S), named `who` ("connection 2: dropped ..."); empty
/// when it dropped none.
std::string oversize_warning(std::string_view who, const ud_result& r, std::uint32_t size);

/// The verdict on the counts: ok, or test_failed naming the loss or the
/// verification failures; a loss while longer datagrams than agreed came
/// (a peer that sends more than -S) is a protocol error saying so.
verdict loss_verdict(const ud_totals& t);

/// A QP as an item of the document's results: kind, index, ok, error
/// (its failure, or its loss), state, qpn, remote_qpn, qkey, the counts
/// (oversize among them), and the setup time under `setup_key`
/// ("connect_us", "join_us").
nlohmann::json result_json(std::string_view kind, std::string_view ready, std::string_view setup_key,
                           const ud_result& r);

/// How a UD tool's summary names its items and says itself on the
/// --stats lines.
struct ud_summary_words {
  std::string_view head;                ///< each line's lead: "udaddy: "
  cli::field items;                     ///< the number of items: {"connections", "{} of 4 connections"}
  cli::field setup;                     ///< their setup statistics: {"connect", "connect {}"}
  bool say_sent = true;                 ///< the first line says what was sent
  bool say_received = true;             ///< ... and what was received of what was expected, and lost
  bool say_rates = true;                ///< a second line says the data phase and the message rate
};

/// The summary's common members, each declared once with its words: the
/// number of items, failed, the counts, the setup statistics; elapsed_us
/// and messages_per_second, null unless the data phase ran. The lines
/// are the --stats lines: the counts, the rates, the setup statistics.
cli::fields summary_fields(const ud_summary_words& words, std::size_t items, const ud_totals& t,
                           std::optional<double> elapsed_us);

/// How a UD test ends, as the originals print it.
struct ud_test_end {
  std::function<std::vector<std::string>()> loss_lines;   ///< the QPs that lost messages
  std::function<std::vector<std::string>()> stats_lines;  ///< with --stats; may be empty
  std::function<verdict()> judge;                         ///< the verdict on a body that ran to its end
  std::function<void()> emit_results;                     ///< one result event per item
};

/// Runs a UD test's body, then prints the loss lines, the --stats lines,
/// emits the result events and closes with "test complete" / "return
/// status N", also when the body threw (the error is thrown on).
verdict run_ud_test(console& con, const std::function<void()>& body, const ud_test_end& end);

}  // namespace fabric
