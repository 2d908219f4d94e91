#pragma once
/// What a ucmatose run produced, and its renderings: the JSON results and
/// summary, the --stats lines, and the verdict. Plain data; no I/O.

#include "options.hpp"

#include "fabric/base/error.hpp"
#include "fabric/base/stats.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ucmatose {

/// The timed steps of one connection, in the order they happen.
enum class step { create_id, resolve_addr, resolve_route, create_qp, connect, disconnect, destroy };
inline constexpr std::size_t step_count = 7;

/// "create_id", "resolve_addr", ...: the --stats table's names and the
/// JSON keys (with "_us" in a result, under "steps" in the summary).
std::string_view step_key(step s) noexcept;

/// One connection's outcome.
struct connection_result {
  std::string peer;                    ///< "10.0.0.1:7471"
  bool established = false;
  std::uint64_t sent = 0, received = 0, verify_errors = 0, unverified = 0;
  std::array<std::optional<double>, step_count> step_us{};  ///< empty: step not done, or not timed
  std::string error;                   ///< empty unless something went wrong on it
};

/// What a run produced.
struct report {
  std::string role = "none";
  std::uint64_t messages = 0;          ///< each way per established connection (-C; 0 with -S 0)
  std::size_t wanted = 0;              ///< -c: the connections the run needs
  std::vector<connection_result> connections;
  /// The client's first address resolution (the server's first connection
  /// request) to the last connection established; empty when untimed or
  /// none was established.
  std::optional<double> setup_us;

  [[nodiscard]] std::size_t established() const;
  [[nodiscard]] std::size_t failed() const;  ///< connections that did not pass (results not ok)
  [[nodiscard]] std::uint64_t expected(const connection_result& c) const;  ///< messages each way, if established
  [[nodiscard]] std::uint64_t lost(const connection_result& c) const;      ///< expected - received
  [[nodiscard]] std::uint64_t expected() const;
  [[nodiscard]] std::uint64_t sent() const;
  [[nodiscard]] std::uint64_t received() const;
  [[nodiscard]] std::uint64_t lost() const;
  [[nodiscard]] std::uint64_t verify_errors() const;
  [[nodiscard]] std::uint64_t unverified() const;
  /// Connections established per second of the setup window; empty without one.
  [[nodiscard]] std::optional<double> connections_per_second() const;
};

/// One step's times over every connection that did it (and was timed).
fabric::latency_summary summarize_step(const std::vector<connection_result>& conns, step s);

/// Connection i as an item of the document's results (and of a result event).
nlohmann::json result_json(const report& r, std::size_t i);

/// The document's role, options, results and summary.
void to_json(nlohmann::json& j, const options& o, const report& r);

/// The --stats lines: the step table, connection rate and message counts.
std::vector<std::string> format_stats(const report& r);

/// The verdict of a run that went to its end: ok; connect_failed when a
/// connection was not established; test_failed when messages were lost or
/// corrupted, or a connection ended with an error.
fabric::verdict judge(const report& r);

}  // namespace ucmatose
