// The report: its totals and renderings; no I/O here.
#include "rping.hpp"

#include "fabric/cli/fields.hpp"
#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>

namespace rping {

using fabric::text_or_null;

void report::fold(const connection_result& c) {
  ++folded.connections;
  folded.pings += c.pings;
  folded.verify_errors += c.verify_errors;
  folded.failed += c.error.empty() ? 0 : 1;
  folded.rtt.merge(c.rtt);
}

std::uint64_t report::total_pings() const {
  std::uint64_t n = folded.pings;
  for (const auto& c : connections) n += c.pings;
  return n;
}

std::uint64_t report::total_verify_errors() const {
  std::uint64_t n = folded.verify_errors;
  for (const auto& c : connections) n += c.verify_errors;
  return n;
}

std::size_t report::failed() const {
  std::size_t n = folded.failed;
  for (const auto& c : connections) n += c.error.empty() ? 0 : 1;
  return n;
}

namespace {

using fabric::cli::field;
constexpr field pings{"pings", "{} pings"};
constexpr field verify_errors{"verify_errors", "{} verify errors"};
constexpr field rtt{"rtt", "rtt {}"};
constexpr field connections{"connections", "served {} connections"};
constexpr field failed{"failed", "{} failed"};

/// A connection's figures, each with its words: its result's, and its --stats line.
fabric::cli::fields connection_fields(const connection_result& c) {
  fabric::cli::fields f;
  f.line().put(pings, c.pings).put(verify_errors, c.verify_errors).put(rtt, c.rtt);
  return f;
}

/// The summary, each value with its words: the document's, and the line
/// that closes a persistent server's run.
fabric::cli::fields summary_fields(const report& r) {
  fabric::latency_stats all = r.folded.rtt;
  for (const auto& c : r.connections) all.merge(c.rtt);
  fabric::cli::fields f;
  f.line("rping: ")
      .put(connections, r.ended())
      .put(pings, r.total_pings())
      .put(verify_errors, r.total_verify_errors())
      .put(failed, r.failed())
      .put(rtt, all, false);
  return f;
}

}  // namespace

nlohmann::json result_json(const connection_result& c) {
  nlohmann::json j{{"kind", "connection"}, {"index", c.index}, {"ok", c.error.empty()},
                   {"error", text_or_null(c.error)}, {"peer", text_or_null(c.peer)}};
  j.update(connection_fields(c).json());
  return j;
}

void to_json(nlohmann::json& j, const options& o, const report& r) {
  j["role"] = r.role;
  j["options"] = options_json(o);
  auto& results = j["results"] = nlohmann::json::array();
  for (const auto& c : r.connections) results.push_back(result_json(c));
  j["summary"] = summary_fields(r).json();
}

std::string format_stats(const connection_result& c) { return connection_fields(c).lines().front(); }

std::string served_line(const report& r) { return summary_fields(r).lines().front(); }

}  // namespace rping
