// The host's health as node_exporter's textfile-collector gauges, for a
// node health checker's cron job beside the collector.
#include "fabric-sweep/health/health.hpp"

#include "fabric/cli/prometheus.hpp"

#include <utility>

namespace sweep {

namespace {

using fabric::cli::exposition;

constexpr double us_per_s = 1e6;
constexpr double transfers_per_gt = 1e9;

}  // namespace

std::string prometheus_text(const options& opt, const health_report& rep, const fabric::verdict& v) {
  exposition out;
  out.family("fabric_health_ok", "1 when every check of the host passed");
  out.sample("fabric_health_ok", {}, v.ok() ? 1 : 0);
  out.family("fabric_health_ports_active", "Ports of the checked devices that are Active");
  out.sample("fabric_health_ports_active", {}, static_cast<double>(active_ports(rep)));
  out.family("fabric_health_ports_expected", "Ports of the checked devices that must be Active (--expect-ports, else all)");
  out.sample("fabric_health_ports_expected", {}, static_cast<double>(expected_ports(opt.health, rep)));
  out.family("fabric_health_port_active", "1 for an Active port");
  for (const auto& hp : rep.ports) {
    const auto& p = hp.info;
    out.sample("fabric_health_port_active",
               {{"device", p.device}, {"port", std::to_string(p.port)}, {"link_layer", fabric::link_layer_name(p.link_layer)}},
               p.state == IBV_PORT_ACTIVE ? 1 : 0);
  }
  out.family("fabric_health_port_rate_bytes_per_second", "A port's rate as the kernel reports it (its Gb/s x 10^9 / 8)");
  for (const auto& hp : rep.ports)
    if (auto g = hp.info.rate_gbps())
      out.sample("fabric_health_port_rate_bytes_per_second", {{"device", hp.info.device}, {"port", std::to_string(hp.info.port)}},
                 *g * 1e9 / 8);
  out.family("fabric_health_port_mtu_bytes", "A port's active MTU");
  for (const auto& hp : rep.ports)
    out.sample("fabric_health_port_mtu_bytes", {{"device", hp.info.device}, {"port", std::to_string(hp.info.port)}},
               hp.info.active_mtu);
  // A device's PCIe link, each figure the kernel gives (none for rxe or siw).
  struct figure {
    const char* name;
    const char* help;
    std::optional<double> (*of)(const fabric::pcie_link&);
  };
  static constexpr figure figures[] = {
      {"fabric_health_pcie_width", "Lanes a device's PCIe link trained at",
       [](const fabric::pcie_link& l) { return l.width ? std::optional<double>(*l.width) : std::nullopt; }},
      {"fabric_health_pcie_max_width", "Lanes a device's PCIe link can have: the lower of the device's and its slot's",
       [](const fabric::pcie_link& l) { return l.max_width ? std::optional<double>(*l.max_width) : std::nullopt; }},
      {"fabric_health_pcie_transfers_per_second", "A lane's speed a device's PCIe link trained at (GT/s x 10^9)",
       [](const fabric::pcie_link& l) { return l.speed_gts ? std::optional<double>(*l.speed_gts * transfers_per_gt) : std::nullopt; }},
      {"fabric_health_pcie_max_transfers_per_second", "A lane's speed a device's PCIe link can reach: the lower of the device's and its slot's",
       [](const fabric::pcie_link& l) {
         return l.max_speed_gts ? std::optional<double>(*l.max_speed_gts * transfers_per_gt) : std::nullopt;
       }},
  };
  for (const auto& f : figures) {
    bool started = false;
    for (const auto& d : rep.devices)
      if (auto value = d.pcie ? f.of(*d.pcie) : std::nullopt) {
        if (!std::exchange(started, true)) out.family(f.name, f.help);
        out.sample(f.name, {{"device", d.name}}, *value);
      }
  }
  if (rep.self) {
    out.family("fabric_health_self_ok", "1 when the RC ping-pong with this host's own address passed");
    out.sample("fabric_health_self_ok", {}, rep.self->ok ? 1 : 0);
    if (rep.self->latency) {
      out.family("fabric_health_self_rtt_p50_seconds", "The self-connection's median round-trip time");
      out.sample("fabric_health_self_rtt_p50_seconds", {}, rep.self->latency->p50 / us_per_s);
    }
  }
  if (!rep.rail_pairs.empty()) {
    // Rail pairs by their sides' devices and addresses (a device may have
    // two ports, each a rail).
    auto sample = [&](std::string_view name, const rail_pair& r, double value) {
      const auto &from = rep.ports[r.from], &to = rep.ports[r.to];
      out.sample(name, {{"device", from.info.device}, {"address", from.address}, {"peer_device", to.info.device}, {"peer", to.address}},
                 value);
    };
    out.family("fabric_health_rail_pair_ok", "1 when the RC ping-pong from one of the host's rails to another passed");
    for (const auto& r : rep.rail_pairs) sample("fabric_health_rail_pair_ok", r, r.result.ok ? 1 : 0);
    out.family("fabric_health_rail_pair_rtt_p50_seconds", "A rail pair's median round-trip time");
    for (const auto& r : rep.rail_pairs)
      if (r.result.latency) sample("fabric_health_rail_pair_rtt_p50_seconds", r, r.result.latency->p50 / us_per_s);
  }
  return out.take();
}

}  // namespace sweep
