// One host alone, as a node health checker asks (NHC gives a check 60 s):
// its RDMA ports, and an RC ping-pong with itself over the address its
// sweep peers would dial. Every wait is bounded by --timeout.
#include "fabric-sweep/health/health.hpp"
#include "fabric-sweep/rank/place.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/base/files.hpp"
#include "fabric/cli/json_values.hpp"
#include "fabric/cm/multicast.hpp"
#include "fabric/flows/rc_ping.hpp"

#include <fmt/format.h>

#include <exception>
#include <thread>

namespace sweep {

using fabric::exit_code;

namespace {

bool active(const fabric::port_info& p) { return p.state == IBV_PORT_ACTIVE; }

/// Pings this host's own address: a server thread listens on it, this
/// thread connects to it, each wait bounded by --timeout, the work by
/// --pair-timeout.
pair_result ping_self(const options& opt, const std::string& host, const std::string& address) {
  pair_result out;
  const auto& r = opt.run;
  out.server = out.client = host;
  out.role = "client";
  out.port = opt.run.port;
  fabric::ping_plan plan;
  plan.addr = address;
  plan.port = static_cast<std::uint16_t>(opt.run.port);
  plan.size = static_cast<std::uint32_t>(pair_size(opt.run));
  plan.count = static_cast<std::uint64_t>(pair_count(opt.run).value_or(100));
  auto bounds = fabric::pair_bounds::from_now(r.each_wait(), r.pair_timeout(), r.each_wait());
  std::exception_ptr served;
  std::thread server([&] {
    try {
      fabric::ping_outcome served_pings;
      fabric::serve_pings(plan, bounds, served_pings);
    } catch (...) {
      served = std::current_exception();
    }
  });
  auto t0 = fabric::clock::now();
  try {
    fabric::ping_outcome got;
    fabric::send_pings(plan, bounds, got);
    out.pings = got.exchanged;
    out.connect_us = got.connect_us;
    out.latency = got.rtt.summary();
    out.ok = true;
  } catch (const fabric::error& e) {
    out.error = e.what();
    if (e.ends_run()) {
      server.join();
      throw;
    }
  }
  server.join();
  out.elapsed_us = fabric::us_since(t0);
  // The server's side fails only with the client's (then the client's word
  // stands), or on its own when it could not listen on the address.
  if (served && out.ok) {
    try {
      std::rethrow_exception(served);
    } catch (const fabric::error& e) {
      if (e.ends_run()) throw;
      out.ok = false;
      out.error = fmt::format("serving: {}", e.what());
    }
  }
  return out;
}

fabric::verdict judge(const options& opt, const health_report& rep) {
  if (rep.ports.empty())
    return {exit_code::no_device, opt.health.device.empty() ? std::string("no RDMA device found")
                                                            : fmt::format("no port of {}", fabric::printable(opt.health.device))};
  if (std::none_of(rep.ports.begin(), rep.ports.end(), active)) {
    std::string seen;
    for (const auto& p : rep.ports)
      seen += fmt::format("{}{} port {} is {}", seen.empty() ? "" : ", ", fabric::printable(p.device), p.port,
                          fabric::port_state_name(p.state));
    return {exit_code::no_device, "no Active port: " + seen};
  }
  for (const auto& p : rep.ports)
    if (auto why = shortfall(opt.health, p); !why.empty()) return {exit_code::test_failed, why};
  if (rep.self && !rep.self->ok)
    return {exit_code::connect_failed, fmt::format("self-connection to {}: {}", rep.address, rep.self->error)};
  return {};
}

}  // namespace

/// "100 Gb/sec (4X EDR)": the kernel's words, else ours from width and speed.
std::string rate_text(const fabric::port_info& p) {
  if (!p.rate.empty()) return fabric::printable(p.rate);
  if (auto g = p.rate_gbps())
    return fmt::format("{} Gb/sec ({} {})", *g, fabric::width_name(p.active_width), fabric::speed_name(p.active_speed));
  return "rate unknown";
}

std::string port_line(const fabric::port_info& p) {
  return fmt::format("{} port {}: {}, {}, MTU {}, {}", fabric::printable(p.device), p.port, fabric::port_state_name(p.state),
                     fabric::link_layer_name(p.link_layer), p.active_mtu, rate_text(p));
}

/// Why an Active port falls short of what --expect-rate and --expect-width
/// ask; empty when it does not.
std::string shortfall(const health_options& h, const fabric::port_info& p) {
  if (!active(p)) return {};
  auto where = fmt::format("{} port {}", fabric::printable(p.device), p.port);
  if (h.expect_rate_gbps) {
    auto rate = p.rate_gbps();
    if (!rate || *rate < *h.expect_rate_gbps) return fmt::format("{}: {}, expected {}", where, rate_text(p), *h.expect_rate_gbps);
  }
  if (!h.expect_width.empty() && fabric::width_name(p.active_width) != h.expect_width)
    return fmt::format("{}: {} wide, expected {}", where, fabric::width_name(p.active_width), h.expect_width);
  if (h.expect_mtu && p.active_mtu != *h.expect_mtu)
    return fmt::format("{}: MTU {}, expected {}", where, p.active_mtu, *h.expect_mtu);
  return {};
}


namespace {

fabric::verdict check_host(const options& opt, health_report& rep, fabric::console& con) {
  auto host = fabric::host_name();
  rep.address = addresses(opt.run, {host}).front();
  rep.ports = fabric::all_ports();
  if (!opt.health.device.empty())
    std::erase_if(rep.ports, [&](const fabric::port_info& p) { return p.device != opt.health.device; });
  for (const auto& p : rep.ports) con.line(port_line(p));
  if (std::any_of(rep.ports.begin(), rep.ports.end(), active)) {
    rep.self = ping_self(opt, host, rep.address);
    const auto& s = *rep.self;
    if (s.ok && s.latency)
      con.line(fmt::format("self-connection {}:{}: {} pings, rtt min {:.1f} p50 {:.1f} p99 {:.1f} max {:.1f} us",
                           rep.address, s.port, s.pings.value_or(0), s.latency->min, s.latency->p50, s.latency->p99, s.latency->max));
  }
  return judge(opt, rep);
}

}  // namespace

fabric::verdict health(const options& opt, health_report& rep, fabric::console& con) {
  con.set_role("health");
  try {
    auto v = check_host(opt, rep, con);
    if (!opt.report.prometheus.empty()) fabric::write_file_atomically(opt.report.prometheus, prometheus_text(rep, v));
    return v;
  } catch (...) {
    // A check that could not finish is no sign of health: the old file
    // must not go on saying healthy.
    if (!opt.report.prometheus.empty())
      fabric::write_file_atomically(opt.report.prometheus,
                                    prometheus_text(rep, {fabric::exit_code::test_failed, "the check did not finish"}));
    throw;
  }
}

void to_json(nlohmann::json& j, const options& opt, const health_report& rep) {
  j["role"] = "health";
  j["options"] = options_json(opt);
  nlohmann::json results = nlohmann::json::array();
  for (const auto& p : rep.ports) {
    auto why = active(p) ? shortfall(opt.health, p) : fmt::format("the port is {}", fabric::port_state_name(p.state));
    results.push_back({{"kind", "port"},
                       {"index", results.size()},
                       {"ok", why.empty()},
                       {"error", fabric::text_or_null(why)},
                       {"device", p.device},
                       {"port", p.port},
                       {"state", fabric::port_state_name(p.state)},
                       {"link_layer", fabric::link_layer_name(p.link_layer)},
                       {"mtu", p.active_mtu},
                       {"width", fabric::width_name(p.active_width)},
                       {"speed", fabric::speed_name(p.active_speed)},
                       {"rate_text", fabric::text_or_null(p.rate)},
                       {"rate_gbps", fabric::value_or_null(p.rate_gbps())}});
  }
  if (rep.self) {
    const auto& s = *rep.self;
    results.push_back({{"kind", "self"},
                       {"index", 0},  // the first of its kind
                       {"ok", s.ok},
                       {"error", fabric::text_or_null(s.error)},
                       {"address", rep.address},
                       {"port", s.port},
                       {"pings", fabric::value_or_null(s.pings)},
                       {"connect_us", fabric::value_or_null(s.connect_us)},
                       {"elapsed_us", s.elapsed_us},
                       {"latency", fabric::value_or_null(s.latency)}});
  }
  auto failed = std::count_if(results.begin(), results.end(), [](const nlohmann::json& r) { return !r["ok"].get<bool>(); });
  j["results"] = std::move(results);
  if (rep.address.empty()) {
    j["summary"] = nlohmann::json::object();
    return;
  }
  j["summary"] = {{"host", fabric::host_name()},
                  {"address", rep.address},
                  {"port_count", rep.ports.size()},
                  {"active_ports", std::count_if(rep.ports.begin(), rep.ports.end(), active)},
                  {"failed", failed},
                  {"self_ok", rep.self ? nlohmann::json(rep.self->ok) : nlohmann::json(nullptr)}};
}

}  // namespace sweep
