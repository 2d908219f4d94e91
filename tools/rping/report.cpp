// Options, their checks, the report and its renderings; no I/O here.
#include "rping.hpp"

#include "protocol.hpp"

#include "fabric/cli/completion.hpp"
#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>

#include <charconv>

namespace rping {

using fabric::text_or_null;

void add_options(CLI::App& app, options& opt) {
  auto* server = app.add_flag("-s,--server", opt.server, "Server side; to bind to any IPv6 address use -a ::0");
  app.add_flag("-c,--client", opt.client, "Client side")->excludes(server);
  app.add_option("-a,--addr", opt.addr, "Address: the server a client connects to, or the address a server binds (default: any IPv4)")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_option("-I,--source", opt.source, "Source address a client binds to")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-p,--port", opt.port, "Port")->capture_default_str();
  app.add_option("-C,--count", opt.count, "Pings to do; 0 pings forever")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 62))
      ->capture_default_str();
  app.add_option("-S,--size", opt.size, "Ping data size in bytes")
      ->check(CLI::Range(min_size, max_size))
      ->capture_default_str();
  app.add_flag("-v,--verbose", opt.verbose, "Print ping data");
  app.add_flag("-V,--verify", opt.verify, "Verify ping data");
  app.add_flag("-d,--debug", opt.debug, "Print debug messages on stderr");
  app.add_flag("-P,--persistent", opt.persistent, "Persistent server: serve clients concurrently until interrupted");
  app.add_flag("-q,--self-qp", opt.self_created_qp, "Use a self-created QP whose state changes rping drives");
  app.add_flag("--stats", opt.stats, "Print a latency summary (min p50 p99 p99.9 max mean stdev)");
  app.add_option("--interval", opt.interval_ms, "Milliseconds to pause between pings")->check(CLI::Range(0, 3'600'000));
  app.add_flag("--busy-poll", opt.busy_poll, "Poll the completion queue instead of sleeping on it (lowest latency)");
  fabric::cli::add_timeout_option(app, opt.timeout_ms, "Milliseconds any wait after connecting may take");
  app.add_option_function<std::string>(
         "--retry",
         [&opt](const std::string& v) {
           if (v.empty()) {
             opt.retry_ms = default_retry_ms;
             return;
           }
           int ms = 0;
           auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), ms);
           if (ec != std::errc{} || end != v.data() + v.size() || ms < 0 || ms > 86'400'000)
             throw CLI::ValidationError("--retry", fmt::format("'{}': milliseconds must be 0-86400000", fabric::printable(v)));
           opt.retry_ms = ms;
         },
         fmt::format("Client: retry connecting for MS milliseconds (default {}) while no server answers",
                     default_retry_ms))
      ->expected(0, 1)
      ->type_name("[MS]");
}

void validate(const options& o) {
  if (!o.server && !o.client) fabric::cli::usage_error("choose a side: -s (server) or -c (client)");
  if (o.client && o.addr.empty()) fabric::cli::usage_error("a client needs -a ADDR, the server's address");
  if (o.persistent && !o.server) fabric::cli::usage_error("-P (persistent) is a server option");
}

std::uint64_t report::total_pings() const {
  std::uint64_t n = 0;
  for (const auto& c : connections) n += c.pings;
  return n;
}

std::uint64_t report::total_verify_errors() const {
  std::uint64_t n = 0;
  for (const auto& c : connections) n += c.verify_errors;
  return n;
}

std::size_t report::failed() const {
  std::size_t n = 0;
  for (const auto& c : connections) n += c.error.empty() ? 0 : 1;
  return n;
}

namespace {
}  // namespace

nlohmann::json options_json(const options& o) {
  return {{"server", o.server},   {"client", o.client},          {"addr", text_or_null(o.addr)},
          {"source", text_or_null(o.source)}, {"port", o.port}, {"count", o.count},
          {"size", o.size},       {"verbose", o.verbose > 0},    {"verify", o.verify},
          {"debug", o.debug > 0}, {"persistent", o.persistent},  {"self_qp", o.self_created_qp},
          {"stats", o.stats},     {"interval", o.interval_ms},   {"busy_poll", o.busy_poll},
          {"timeout", o.timeout_ms}, {"retry", o.retry_ms}};
}

nlohmann::json result_json(const connection_result& c) {
  return {{"kind", "connection"}, {"index", c.index},  {"ok", c.error.empty()},
          {"error", text_or_null(c.error)}, {"peer", c.peer}, {"pings", c.pings},
          {"verify_errors", c.verify_errors}, {"rtt", c.rtt.summary()}};
}

void to_json(nlohmann::json& j, const options& o, const report& r) {
  j["role"] = r.role;
  j["options"] = options_json(o);
  fabric::latency_stats all;
  auto& results = j["results"] = nlohmann::json::array();
  for (const auto& c : r.connections) {
    results.push_back(result_json(c));
    all.merge(c.rtt);
  }
  j["summary"] = {{"connections", r.connections.size()}, {"failed", r.failed()},
                  {"pings", r.total_pings()},            {"verify_errors", r.total_verify_errors()},
                  {"rtt", all.summary()}};
}

std::string format_stats(const connection_result& c) {
  return fmt::format("{} pings, {} verify failures, rtt {}", c.pings, c.verify_errors,
                     fabric::format_summary(c.rtt.summary()));
}

}  // namespace rping
