#include "ucmatose.hpp"

#include "fabric/completion.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace ucmatose {

using fabric::error;
using fabric::exit_code;

void add_options(CLI::App& app, options& opt) {
  app.add_option("-s,--server", opt.server, "Server address: run as the client and connect to it")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_option("-b,--bind", opt.bind, "Local address to bind to")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-f,--format", opt.format, "Address format: name, ip, ipv6 or gid")
      ->check(CLI::IsMember({"name", "ip", "ipv6", "gid"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_option("-P,--port-space", opt.port_space, "rdma_cm port space: tcp or ib")
      ->check(CLI::IsMember({"tcp", "ib"}, CLI::ignore_case))
      ->capture_default_str();
  app.add_option("-c,--connections", opt.connections, "Connections to set up at once")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("-C,--count", opt.count, "Messages each way per connection")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  app.add_option("-S,--size", opt.size, "Message size in bytes (0: no messages)")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  app.add_option("-t,--tos", opt.tos, "Type of service of the client's connections")->check(CLI::Range(0, 255));
  app.add_option("-p,--port", opt.port, "rdma_cm port number")->capture_default_str();
  app.add_option("-a,--ack-timeout", opt.ack_timeout, "Local ACK timeout exponent (4.096 us x 2^N)")
      ->check(CLI::Range(0, 31));
  app.add_flag("-m,--migrate", opt.migrate, "Move every id to a new event channel before disconnecting");
  fabric::cli::add_timeout_option(app, opt.timeout_ms, "Milliseconds any wait for the peer may take");
  app.add_flag("--verify", opt.verify, "Fill payloads with a pattern and check every message received");
  app.add_flag("--stats", opt.stats, "Print step timings, connection rate and message counts");
}

void validate(const options& opt) {
  // One send slot per message; with --verify also one receive slot per
  // message of every connection.
  auto total = static_cast<double>(opt.messages()) * opt.size * (opt.verify ? opt.connections + 1.0 : 1.0) + opt.size;
  if (total > static_cast<double>(1ULL << 31))
    throw error(exit_code::usage,
                fmt::format("-C {} x -S {}{} needs {:.0f} MiB of buffers; the limit is 2048 MiB", opt.count, opt.size,
                            opt.verify ? fmt::format(" x -c {} (--verify)", opt.connections) : "", total / (1 << 20)));
}

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

std::string_view step_label(step s) noexcept {
  switch (s) {
    case step::create_id: return "create id";
    case step::resolve_addr: return "resolve addr";
    case step::resolve_route: return "resolve route";
    case step::create_qp: return "create qp";
    case step::connect: return "connect";
    case step::disconnect: return "disconnect";
    case step::destroy: return "destroy";
  }
  return "unknown";
}

step_summary summarize_step(const std::vector<connection_result>& conns, step s) {
  step_summary sum;
  double total = 0;
  sum.min = std::numeric_limits<double>::infinity();
  for (const auto& c : conns) {
    const auto& v = c.step_us[static_cast<std::size_t>(s)];
    if (!v) continue;
    ++sum.count;
    total += *v;
    sum.min = std::min(sum.min, *v);
    sum.max = std::max(sum.max, *v);
  }
  if (sum.count == 0) return {};
  sum.mean = total / static_cast<double>(sum.count);
  return sum;
}

namespace {
template <class F>
std::uint64_t sum_of(const std::vector<connection_result>& conns, F f) {
  std::uint64_t n = 0;
  for (const auto& c : conns) n += f(c);
  return n;
}
}  // namespace

std::size_t report::established() const {
  return static_cast<std::size_t>(sum_of(connections, [](const auto& c) { return c.established ? 1u : 0u; }));
}
std::uint64_t report::expected() const { return established() * static_cast<std::uint64_t>(opt.messages()); }
std::uint64_t report::sent() const { return sum_of(connections, [](const auto& c) { return c.sent; }); }
std::uint64_t report::received() const { return sum_of(connections, [](const auto& c) { return c.received; }); }
std::uint64_t report::lost() const {
  std::uint64_t want = expected(), got = received();
  return got >= want ? 0 : want - got;
}
std::uint64_t report::verify_failures() const {
  return sum_of(connections, [](const auto& c) { return c.verify_failures; });
}
std::uint64_t report::unverified() const { return sum_of(connections, [](const auto& c) { return c.unverified; }); }
double report::connections_per_second() const {
  return setup_ms > 0 ? static_cast<double>(established()) * 1000.0 / setup_ms : 0.0;
}

void to_json(nlohmann::json& j, const report& r) {
  const auto& o = r.opt;
  j["role"] = r.role;
  nlohmann::json opts{{"format", o.format},         {"port_space", o.port_space}, {"connections", o.connections},
                      {"count", o.count},           {"size", o.size},             {"port", o.port},
                      {"migrate", o.migrate},       {"timeout", o.timeout_ms},    {"verify", o.verify}};
  if (!o.server.empty()) opts["server"] = o.server;
  if (!o.bind.empty()) opts["bind"] = o.bind;
  if (o.tos) opts["tos"] = *o.tos;
  if (o.ack_timeout) opts["ack_timeout"] = *o.ack_timeout;
  j["options"] = std::move(opts);
  nlohmann::json conns = nlohmann::json::array();
  for (std::size_t i = 0; i < r.connections.size(); ++i) {
    const auto& c = r.connections[i];
    nlohmann::json cj{{"index", i},           {"connected", c.established}, {"sent", c.sent},
                      {"received", c.received}, {"verify_failures", c.verify_failures}};
    if (!c.peer.empty()) cj["peer"] = c.peer;
    if (c.unverified) cj["unverified"] = c.unverified;
    nlohmann::json st = nlohmann::json::object();
    for (std::size_t s = 0; s < step_count; ++s)
      if (c.step_us[s]) st[std::string(step_key(static_cast<step>(s)))] = *c.step_us[s];
    cj["steps_us"] = std::move(st);
    cj["error"] = c.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.error);
    conns.push_back(std::move(cj));
  }
  j["connections"] = std::move(conns);
  j["counts"] = {{"connections", r.connections.size()}, {"connected", r.established()}, {"sent", r.sent()},
                 {"received", r.received()},            {"expected", r.expected()},     {"lost", r.lost()},
                 {"verify_failures", r.verify_failures()}, {"unverified", r.unverified()}};
  nlohmann::json steps = nlohmann::json::object();
  for (std::size_t i = 0; i < step_count; ++i) {
    auto s = summarize_step(r.connections, static_cast<step>(i));
    if (s.count == 0) continue;
    steps[std::string(step_key(static_cast<step>(i)))] = {{"min", s.min}, {"mean", s.mean}, {"max", s.max}, {"samples", s.count}};
  }
  j["steps_us"] = std::move(steps);
  j["connections_per_second"] = r.connections_per_second();
}

std::vector<std::string> format_stats(const report& r) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("{:<14}{:>7}{:>12}{:>12}{:>12}", "step", "conns", "min us", "mean us", "max us"));
  for (std::size_t i = 0; i < step_count; ++i) {
    auto s = summarize_step(r.connections, static_cast<step>(i));
    if (s.count == 0) continue;
    lines.push_back(fmt::format("{:<14}{:>7}{:>12.2f}{:>12.2f}{:>12.2f}", step_key(static_cast<step>(i)), s.count,
                                s.min, s.mean, s.max));
  }
  lines.push_back(fmt::format("connections: {} established, {} failed, setup {:.2f} ms, {:.1f} connections/s",
                              r.established(), r.connections.size() - r.established(), r.setup_ms,
                              r.connections_per_second()));
  lines.push_back(fmt::format("messages: {} sent, {} received, {} lost", r.sent(), r.received(), r.lost()));
  return lines;
}

exit_code verdict(const report& r, std::string& why) {
  auto want = static_cast<std::size_t>(r.opt.connections);
  if (r.established() < want) {
    why = fmt::format("{} of {} connections failed", want - r.established(), want);
    auto first = std::find_if(r.connections.begin(), r.connections.end(),
                              [](const auto& c) { return !c.established && !c.error.empty(); });
    if (first != r.connections.end()) why += ": " + first->error;
    return exit_code::connect_failed;
  }
  if (r.lost() > 0 || r.sent() < r.expected()) {
    why = fmt::format("messages: {} sent, {} received, {} lost (expected {} each way)", r.sent(), r.received(),
                      r.lost(), r.expected());
    return exit_code::test_failed;
  }
  if (r.verify_failures() > 0) {
    why = fmt::format("{} of {} messages failed verification", r.verify_failures(), r.received());
    return exit_code::test_failed;
  }
  auto with_errors = std::count_if(r.connections.begin(), r.connections.end(), [](const auto& c) { return !c.error.empty(); });
  if (with_errors > 0) {
    auto first = std::find_if(r.connections.begin(), r.connections.end(), [](const auto& c) { return !c.error.empty(); });
    why = fmt::format("{} of {} connections ended with an error: {}", with_errors, r.connections.size(), first->error);
    return exit_code::test_failed;
  }
  return exit_code::ok;
}

}  // namespace ucmatose
