// node_exporter's textfile-collector format: a cluster already scraped by
// Prometheus graphs the sweep's pairs and each host's health with no new
// service. Times in seconds, as Prometheus' base units want.
#include "sweep.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sweep {

namespace {

/// A label value, with the format's escapes for backslash, double quote
/// and line feed. Names come from parsed JSON or the kernel: valid UTF-8,
/// which the format takes as it is.
std::string label(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string_view("\\n") : std::string_view(&c, 1);
  }
  return out;
}

/// Gathers one metric family after another: HELP and TYPE, then samples.
class exposition {
public:
  void family(std::string_view name, std::string_view help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  }
  void sample(std::string_view name, std::initializer_list<std::pair<std::string_view, std::string_view>> labels,
              double value) {
    text_ += name;
    if (labels.size() > 0) {
      text_ += '{';
      bool first = true;
      for (auto [key, v] : labels) {
        text_ += fmt::format("{}{}=\"{}\"", first ? "" : ",", key, label(v));
        first = false;
      }
      text_ += '}';
    }
    text_ += fmt::format(" {}\n", value);
  }
  [[nodiscard]] std::string take() { return std::move(text_); }

private:
  std::string text_;
};

constexpr double us_per_s = 1e6;

}  // namespace

std::string prometheus_text(const matrix& m) {
  exposition out;
  out.family("fabric_sweep_hosts", "Hosts in the sweep's matrix");
  out.sample("fabric_sweep_hosts", {}, static_cast<double>(m.hosts.size()));
  out.family("fabric_sweep_pairs", "Pairs of the matrix by state: ok, slow, failed, missing");
  for (const char* state : {"ok", "slow", "failed", "missing"})
    out.sample("fabric_sweep_pairs", {{"state", state}}, static_cast<double>(m.count(state)));
  // The check is a label, so that sweeps of every check share the families.
  std::string check(check_name(m.check));
  out.family("fabric_sweep_median_p50_seconds",
             "The fleet's median of the pairs' median times (round trip, or connection setup: the check label)");
  out.sample("fabric_sweep_median_p50_seconds", {{"check", check}}, m.median_p50_us / us_per_s);
  out.family("fabric_sweep_pair_p50_seconds", "A pair's median time (round trip, or connection setup: the check label)");
  for (const auto& p : m.pairs)
    if (p.latency)
      out.sample("fabric_sweep_pair_p50_seconds", {{"check", check}, {"a", p.a}, {"b", p.b}}, p.latency->p50 / us_per_s);
  out.family("fabric_sweep_pair_p99_seconds", "A pair's 99th percentile time (round trip, or connection setup)");
  for (const auto& p : m.pairs)
    if (p.latency)
      out.sample("fabric_sweep_pair_p99_seconds", {{"check", check}, {"a", p.a}, {"b", p.b}}, p.latency->p99 / us_per_s);
  out.family("fabric_sweep_pair_bad", "1 for a pair that is slow, failed or missing (passing pairs are not listed)");
  for (const auto& p : m.pairs)
    if (p.state != "ok") out.sample("fabric_sweep_pair_bad", {{"a", p.a}, {"b", p.b}, {"state", p.state}}, 1);
  out.family("fabric_sweep_host_bad_pairs", "Bad pairs a host is in: the likely culprit has the most");
  for (const auto& h : m.hosts) {
    auto it = std::find_if(m.worst.begin(), m.worst.end(), [&](const auto& w) { return w.first == h; });
    out.sample("fabric_sweep_host_bad_pairs", {{"host", h}}, it == m.worst.end() ? 0 : it->second);
  }
  return out.take();
}

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
