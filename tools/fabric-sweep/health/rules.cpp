// What fails a host, rule by rule, in words an admin reads at once.
#include "fabric-sweep/health/health.hpp"

#include "fabric/base/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace sweep {

using fabric::exit_code;

namespace {

bool active(const fabric::port_info& p) { return p.state == IBV_PORT_ACTIVE; }

std::string where(const fabric::port_info& p) { return fmt::format("{} port {}", fabric::printable(p.device), p.port); }

/// A lane's speed as the kernel writes it: "2.5", "8.0", "16.0".
std::string gts_text(double gts) { return fmt::format("{:.1f} GT/s", gts); }

/// A figure below another, by more than a reading's rounding.
bool below(double have, double can) { return have + 1e-6 < can; }

std::string expectation_words(const pcie_expectation& e) {
  if (e.width != 0 && e.generation != 0) return fmt::format("x{} {}", e.width, gts_text(fabric::pcie_generation_gts(e.generation)));
  if (e.width != 0) return fmt::format("x{}", e.width);
  return gts_text(fabric::pcie_generation_gts(e.generation));
}

}  // namespace

std::string rate_text(const fabric::port_info& p) {
  if (!p.rate.empty()) return fabric::printable(p.rate);
  if (auto g = p.rate_gbps())
    return fmt::format("{} Gb/sec ({} {})", *g, fabric::width_name(p.active_width), fabric::speed_name(p.active_speed));
  return "rate unknown";
}

std::string port_line(const fabric::port_info& p) {
  return fmt::format("{}: {}, {}, MTU {}, {}", where(p), fabric::port_state_name(p.state), fabric::link_layer_name(p.link_layer),
                     p.active_mtu, rate_text(p));
}

std::string shortfall(const health_options& h, const fabric::port_info& p) {
  if (!active(p)) return {};
  if (h.expect_rate_gbps) {
    auto rate = p.rate_gbps();
    if (!rate || *rate < *h.expect_rate_gbps) return fmt::format("{}: {}, expected {}", where(p), rate_text(p), *h.expect_rate_gbps);
  }
  if (!h.expect_width.empty() && fabric::width_name(p.active_width) != h.expect_width)
    return fmt::format("{}: {} wide, expected {}", where(p), fabric::width_name(p.active_width), h.expect_width);
  if (!h.expect_speed.empty() && fabric::speed_name(p.active_speed) != h.expect_speed)
    return fmt::format("{}: speed {}, expected {}", where(p), fabric::speed_name(p.active_speed), h.expect_speed);
  if (h.expect_mtu && p.active_mtu != *h.expect_mtu)
    return fmt::format("{}: MTU {}, expected {}", where(p), p.active_mtu, *h.expect_mtu);
  return {};
}

std::size_t active_ports(const health_report& rep) {
  return static_cast<std::size_t>(
      std::count_if(rep.ports.begin(), rep.ports.end(), [](const host_port& p) { return active(p.info); }));
}

std::size_t expected_ports(const health_options& h, const health_report& rep) {
  return h.expect_ports ? static_cast<std::size_t>(*h.expect_ports) : rep.ports.size();
}

std::string port_state_problem(const health_options& h, const health_report& rep, const fabric::port_info& p) {
  if (active(p) || (h.expect_ports && active_ports(rep) >= expected_ports(h, rep))) return {};
  return fmt::format("the port is {}", fabric::port_state_name(p.state));
}

std::string pcie_text(std::optional<unsigned> width, std::optional<double> speed_gts) {
  return fmt::format("x{} {}", width ? std::to_string(*width) : "?", speed_gts ? gts_text(*speed_gts) : "? GT/s");
}

std::string device_line(const host_device& d) {
  if (!d.pcie) return {};
  const auto& l = *d.pcie;
  return fmt::format("{}: PCIe {} of {} ({})", fabric::printable(d.name), pcie_text(l.width, l.speed_gts),
                     pcie_text(l.max_width, l.max_speed_gts), fabric::printable(l.function));
}

std::string pcie_shortfall(const health_options& h, const host_device& d) {
  if (!d.pcie) return {};
  const auto& l = *d.pcie;
  auto now = fmt::format("{}: PCIe {}", fabric::printable(d.name), pcie_text(l.width, l.speed_gts));
  if (h.expect_pcie) {
    const auto& e = *h.expect_pcie;
    bool narrow = e.width != 0 && (!l.width || *l.width < e.width);
    bool slow = e.generation != 0 && (!l.speed_gts || below(*l.speed_gts, fabric::pcie_generation_gts(e.generation)));
    return narrow || slow ? fmt::format("{}, expected {}", now, expectation_words(e)) : std::string();
  }
  bool narrow = l.width && l.max_width && *l.width < *l.max_width;
  bool slow = l.speed_gts && l.max_speed_gts && below(*l.speed_gts, *l.max_speed_gts);
  if (!narrow && !slow) return {};
  return fmt::format("{}, the slot and device can do {}", now, pcie_text(l.max_width, l.max_speed_gts));
}

std::string rail_name(const host_port& p) {
  return fmt::format("{} ({})", where(p.info), p.address.empty() ? "no address" : fabric::printable(p.address));
}

fabric::verdict judge(const options& opt, const health_report& rep) {
  const auto& h = opt.health;
  if (!rep.missing.empty())
    return {exit_code::no_device, fmt::format("no port of {}", fabric::printable(fmt::format("{}", fmt::join(rep.missing, ", "))))};
  if (rep.ports.empty()) return {exit_code::no_device, "no RDMA device found"};
  std::vector<std::string> idle;
  for (const auto& p : rep.ports)
    if (!active(p.info)) idle.push_back(fmt::format("{} is {}", where(p.info), fabric::port_state_name(p.info.state)));
  if (active_ports(rep) == 0) return {exit_code::no_device, fmt::format("no Active port: {}", fmt::join(idle, ", "))};
  if (h.expect_ports && active_ports(rep) < expected_ports(h, rep)) {
    auto count = fmt::format("{} Active port{}, expected {}", active_ports(rep), active_ports(rep) == 1 ? "" : "s", *h.expect_ports);
    return {exit_code::test_failed, idle.empty() ? count : fmt::format("{}: {}", count, fmt::join(idle, ", "))};
  }
  if (!h.expect_ports && !idle.empty()) return {exit_code::test_failed, fmt::format("{}", fmt::join(idle, ", "))};
  for (const auto& p : rep.ports)
    if (auto why = shortfall(h, p.info); !why.empty()) return {exit_code::test_failed, why};
  for (const auto& d : rep.devices)
    if (auto why = pcie_shortfall(h, d); !why.empty()) return {exit_code::test_failed, why};
  if (rep.self && !rep.self->ok)
    return {exit_code::connect_failed, fmt::format("self-connection to {}: {}", rep.address, rep.self->error)};
  for (const auto& r : rep.rail_pairs)
    if (!r.result.ok)
      return {exit_code::connect_failed, fmt::format("from rail {} to rail {}: {}", rail_name(rep.ports[r.from]),
                                                     rail_name(rep.ports[r.to]), r.result.error)};
  return {};
}

}  // namespace sweep
