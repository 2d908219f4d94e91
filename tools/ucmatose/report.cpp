// The report's totals and renderings; no I/O here.
#include "report.hpp"

#include "fabric/cli/fields.hpp"
#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ucmatose {

using fabric::text_or_null;

using fabric::exit_code;

std::string_view step_key(step s) noexcept {
  switch (s) {
    case step::create_id: return "create_id";
    case step::resolve_addr: return "resolve_addr";
    case step::resolve_route: return "resolve_route";
    case step::create_qp: return "create_qp";
    case step::connect: return "connect";
    case step::disconnect: return "disconnect";
    case step::destroy: return "destroy";
  }
  return "unknown";
}

fabric::latency_summary summarize_step(const std::vector<connection_result>& conns, step s) {
  std::vector<double> times;
  times.reserve(conns.size());
  for (const auto& c : conns)
    if (const auto& v = c.step_us[static_cast<std::size_t>(s)]) times.push_back(*v);
  return fabric::summarize(times);
}

namespace {

template <class F>
std::uint64_t sum_of(const std::vector<connection_result>& conns, F f) {
  std::uint64_t n = 0;
  for (const auto& c : conns) n += f(c);
  return n;
}

/// Why connection c did not pass; empty when it did.
std::string problem(const report& r, const connection_result& c) {
  if (!c.error.empty()) return c.error;
  if (!c.established) return "not established";
  if (auto lost = r.lost(c); lost > 0) return fmt::format("{} of {} messages lost", lost, r.expected(c));
  if (c.sent < r.expected(c)) return fmt::format("{} of {} messages sent", c.sent, r.expected(c));
  if (c.verify_errors > 0) return fmt::format("{} of {} messages failed verification", c.verify_errors, c.received);
  return {};
}

}  // namespace

std::size_t report::established() const {
  return static_cast<std::size_t>(sum_of(connections, [](const auto& c) { return c.established ? 1u : 0u; }));
}
std::size_t report::failed() const {
  return static_cast<std::size_t>(sum_of(connections, [&](const auto& c) { return problem(*this, c).empty() ? 0u : 1u; }));
}
std::uint64_t report::expected(const connection_result& c) const { return c.established ? messages : 0; }
std::uint64_t report::lost(const connection_result& c) const {
  return c.received >= expected(c) ? 0 : expected(c) - c.received;
}
std::uint64_t report::expected() const { return sum_of(connections, [&](const auto& c) { return expected(c); }); }
std::uint64_t report::sent() const { return sum_of(connections, [](const auto& c) { return c.sent; }); }
std::uint64_t report::received() const { return sum_of(connections, [](const auto& c) { return c.received; }); }
std::uint64_t report::lost() const { return sum_of(connections, [&](const auto& c) { return lost(c); }); }
std::uint64_t report::verify_errors() const {
  return sum_of(connections, [](const auto& c) { return c.verify_errors; });
}
std::uint64_t report::unverified() const { return sum_of(connections, [](const auto& c) { return c.unverified; }); }
std::optional<double> report::connections_per_second() const {
  if (!setup_us || *setup_us <= 0) return std::nullopt;
  return static_cast<double>(established()) * 1e6 / *setup_us;
}

nlohmann::json result_json(const report& r, std::size_t i) {
  const auto& c = r.connections[i];
  auto why = problem(r, c);
  nlohmann::json j{{"kind", "connection"},
                   {"index", i},
                   {"ok", why.empty()},
                   {"error", text_or_null(why)},
                   {"peer", c.peer},
                   {"established", c.established},
                   {"sent", c.sent},
                   {"received", c.received},
                   {"expected", r.expected(c)},
                   {"lost", r.lost(c)},
                   {"verify_errors", c.verify_errors},
                   {"unverified", c.unverified}};
  // A step not done, or not timed, is null.
  for (std::size_t s = 0; s < step_count; ++s)
    j[fmt::format("{}_us", step_key(static_cast<step>(s)))] = fabric::value_or_null(c.step_us[s]);
  return j;
}

namespace {

/// The summary, each value with its words: the document's and the
/// --stats lines below the step table.
fabric::cli::fields summary_fields(const report& r) {
  using fabric::cli::field;
  static constexpr field connections{"connections", "{} connections"};
  static constexpr field established{"connections_established", "{} established"};
  static constexpr field failed{"failed", "{} failed"};
  static constexpr field setup{"setup_us", "setup {:.2f} ms", ", ", 1e-3};
  static constexpr field rate{"connections_per_second", "{:.1f} connections/s"};
  static constexpr field expected{"expected", "{} expected"};
  static constexpr field sent{"sent", "{} sent"};
  static constexpr field received{"received", "{} received"};
  static constexpr field lost{"lost", "{} lost"};
  static constexpr field verify_errors{"verify_errors", "{} verify errors"};
  static constexpr field unverified{"unverified", "{} unverified"};
  fabric::cli::fields f;
  f.line("connections: ")
      .put(connections, r.connections.size(), false)
      .put(established, r.established())
      .put(failed, r.failed())
      .put(setup, r.setup_us)
      .put(rate, r.connections_per_second());
  f.line("messages: ")
      .put(sent, r.sent())
      .put(received, r.received())
      .put(lost, r.lost())
      .put(expected, r.expected(), false)
      .put(verify_errors, r.verify_errors(), false)
      .put(unverified, r.unverified(), false);
  return f;
}

/// The step table's rows as the summary's steps: each named by its key.
nlohmann::json steps_json(const report& r) {
  nlohmann::json steps = nlohmann::json::object();
  for (std::size_t s = 0; s < step_count; ++s)
    steps[std::string(step_key(static_cast<step>(s)))] = summarize_step(r.connections, static_cast<step>(s));
  return steps;
}

}  // namespace

void to_json(nlohmann::json& j, const options& o, const report& r) {
  j["role"] = r.role;
  j["options"] = options_json(o);
  auto& results = j["results"] = nlohmann::json::array();
  for (std::size_t i = 0; i < r.connections.size(); ++i) results.push_back(result_json(r, i));
  j["summary"] = summary_fields(r).json();
  j["summary"]["steps"] = steps_json(r);
}

std::vector<std::string> format_stats(const report& r) {
  std::vector<std::string> lines;
  // The step table: each row named by its key in the document's steps.
  lines.push_back(fmt::format("{:<14}{:>7}{:>12}{:>12}{:>12}", "step", "conns", "min us", "mean us", "max us"));
  for (std::size_t i = 0; i < step_count; ++i) {
    auto s = summarize_step(r.connections, static_cast<step>(i));
    if (s.count == 0) continue;
    lines.push_back(fmt::format("{:<14}{:>7}{:>12.2f}{:>12.2f}{:>12.2f}", step_key(static_cast<step>(i)), s.count,
                                s.min, s.mean, s.max));
  }
  for (auto& line : summary_fields(r).lines()) lines.push_back(std::move(line));
  return lines;
}

fabric::verdict judge(const report& r) {
  if (r.established() < r.wanted) {
    auto why = fmt::format("{} of {} connections failed", r.wanted - r.established(), r.wanted);
    auto first = std::find_if(r.connections.begin(), r.connections.end(),
                              [](const auto& c) { return !c.established && !c.error.empty(); });
    if (first != r.connections.end()) why += ": " + first->error;
    return {exit_code::connect_failed, why};
  }
  if (r.lost() > 0 || r.sent() < r.expected())
    return {exit_code::test_failed, fmt::format("messages: {} sent, {} received, {} lost (expected {} each way)",
                                                r.sent(), r.received(), r.lost(), r.expected())};
  if (r.verify_errors() > 0)
    return {exit_code::test_failed,
            fmt::format("{} of {} messages failed verification", r.verify_errors(), r.received())};
  auto with_errors =
      std::count_if(r.connections.begin(), r.connections.end(), [](const auto& c) { return !c.error.empty(); });
  if (with_errors > 0) {
    auto first = std::find_if(r.connections.begin(), r.connections.end(), [](const auto& c) { return !c.error.empty(); });
    return {exit_code::test_failed, fmt::format("{} of {} connections ended with an error: {}", with_errors,
                                                r.connections.size(), first->error)};
  }
  return {};
}

}  // namespace ucmatose
