// The host's health as node_exporter's textfile-collector gauges, for a
// node health checker's cron job beside the collector.
#include "fabric-sweep/health/health.hpp"

#include "fabric/cli/prometheus.hpp"

namespace sweep {

namespace {

using fabric::cli::exposition;

constexpr double us_per_s = 1e6;

}  // namespace

std::string prometheus_text(const health_report& rep, const fabric::verdict& v) {
  exposition out;
  out.family("fabric_health_ok", "1 when a port is Active and the host reached itself over RDMA");
  out.sample("fabric_health_ok", {}, v.ok() ? 1 : 0);
  out.family("fabric_health_port_active", "1 for an Active port");
  for (const auto& p : rep.ports) {
    auto port = std::to_string(p.port);
    out.sample("fabric_health_port_active",
               {{"device", p.device}, {"port", port}, {"link_layer", fabric::link_layer_name(p.link_layer)}},
               p.state == IBV_PORT_ACTIVE ? 1 : 0);
  }
  out.family("fabric_health_port_rate_bytes_per_second", "A port's rate as the kernel reports it (its Gb/s x 10^9 / 8)");
  for (const auto& p : rep.ports)
    if (auto g = p.rate_gbps())
      out.sample("fabric_health_port_rate_bytes_per_second", {{"device", p.device}, {"port", std::to_string(p.port)}},
                 *g * 1e9 / 8);
  out.family("fabric_health_port_mtu_bytes", "A port's active MTU");
  for (const auto& p : rep.ports)
    out.sample("fabric_health_port_mtu_bytes", {{"device", p.device}, {"port", std::to_string(p.port)}}, p.active_mtu);
  if (rep.self) {
    out.family("fabric_health_self_ok", "1 when the RC ping-pong with this host's own address passed");
    out.sample("fabric_health_self_ok", {}, rep.self->ok ? 1 : 0);
    if (rep.self->latency) {
      out.family("fabric_health_self_rtt_p50_seconds", "The self-connection's median round-trip time");
      out.sample("fabric_health_self_rtt_p50_seconds", {}, rep.self->latency->p50 / us_per_s);
    }
  }
  return out.take();
}

}  // namespace sweep
