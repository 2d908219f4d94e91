// The report as node_exporter's textfile-collector gauges: a cluster
// already scraped by Prometheus graphs the sweep with no new service.
// Times in seconds and bandwidth in bytes per second, as Prometheus' base
// units want. By default a few series a host and one per bad pair, so that
// a thousand hosts do not make a million series; every pair on request.
#include "fabric-sweep/report/render/render.hpp"

#include "fabric-sweep/discover/subnet.hpp"

#include "fabric/base/text.hpp"
#include "fabric/cli/prometheus.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sweep {

namespace {

using fabric::cli::exposition;

constexpr double us_per_s = 1e6;
constexpr double bytes_per_gbit = 1e9 / 8;

/// A few series a suspect link (report --fabric), none a pair: the link
/// by its two ends, each its node's description, GUID and port.
void suspect_gauges(exposition& out, const std::vector<locate::suspect>& suspects) {
  out.family("fabric_sweep_suspect_links", "Links the fabric's locating names as suspects (report --fabric)");
  out.sample("fabric_sweep_suspect_links", {}, static_cast<double>(suspects.size()));
  auto sample = [&out](std::string_view family, const locate::suspect& s, double value, std::string_view counter = {}) {
    const auto& a = s.ends[0];
    const auto& b = s.ends[1];
    auto a_name = fabric::printable_utf8(a.description), b_name = fabric::printable_utf8(b.description);
    auto a_guid = subnet::guid_text(a.node_guid), b_guid = subnet::guid_text(b.node_guid);
    auto a_port = std::to_string(a.port), b_port = std::to_string(b.port);
    if (counter.empty())
      out.sample(family, {{"a", a_name}, {"a_guid", a_guid}, {"a_port", a_port}, {"b", b_name}, {"b_guid", b_guid}, {"b_port", b_port}},
                 value);
    else
      out.sample(family,
                 {{"a", a_name}, {"a_guid", a_guid}, {"a_port", a_port}, {"b", b_name}, {"b_guid", b_guid}, {"b_port", b_port},
                  {"counter", counter}},
                 value);
  };
  out.family("fabric_sweep_suspect_link_score", "A suspect link's score: the bad pairs it explains, weighted by its evidence");
  for (const auto& s : suspects) sample("fabric_sweep_suspect_link_score", s, s.score);
  out.family("fabric_sweep_suspect_link_bad_pairs", "The slow and failed pairs whose route crosses a suspect link");
  for (const auto& s : suspects) sample("fabric_sweep_suspect_link_bad_pairs", s, static_cast<double>(s.pairs_bad));
  out.family("fabric_sweep_suspect_link_counter_increase",
             "How much an error counter of a suspect link's ports rose between the two fabric documents");
  for (const auto& s : suspects)
    for (const auto& [name, rise] : s.counters) sample("fabric_sweep_suspect_link_counter_increase", s, static_cast<double>(rise), name);
}

}  // namespace

std::string prometheus_text(const matrix& m, bool every_pair) {
  exposition out;
  out.family("fabric_sweep_hosts", "Hosts in the sweep's matrix");
  out.sample("fabric_sweep_hosts", {}, static_cast<double>(m.hosts.size()));
  out.family("fabric_sweep_pairs", "Pairs of the matrix by state: ok, slow, failed, missing");
  for (auto state : {pair_state::ok, pair_state::slow, pair_state::failed, pair_state::missing})
    out.sample("fabric_sweep_pairs", {{"state", state_name(state)}}, static_cast<double>(m.count(state)));
  // The check is a label, so that sweeps of every check share the families.
  std::string check(check_name(m.check));
  auto n = m.hosts.size();
  // Label values as every rendering writes a name: UTF-8 as it is, a
  // control character as the text \xNN.
  std::vector<std::string> hosts;
  hosts.reserve(n);
  for (const auto& h : m.hosts) hosts.push_back(fabric::printable_utf8(h));
  if (measures_bandwidth(m.check)) {
    if (auto bar = m.bar.value) {
      out.family("fabric_sweep_bar_bytes_per_second", "The bandwidth below which a pair is slow");
      out.sample("fabric_sweep_bar_bytes_per_second", {{"check", check}}, *bar * bytes_per_gbit);
    }
    // Each host's lowest bandwidth to a peer and from one: a bad link or
    // a bad host shows without a series per pair.
    std::vector<std::optional<double>> lowest_out(n), lowest_in(n);
    auto lower = [](std::optional<double>& at, double v) { at = std::min(at.value_or(v), v); };
    for (const auto& p : m.pairs) {
      if (auto d = p.a_to_b()) lower(lowest_out[p.a], d->gbps), lower(lowest_in[p.b], d->gbps);
      if (auto d = p.b_to_a()) lower(lowest_out[p.b], d->gbps), lower(lowest_in[p.a], d->gbps);
    }
    out.family("fabric_sweep_host_min_out_bytes_per_second", "A host's lowest bandwidth to a peer");
    for (std::size_t i = 0; i < n; ++i)
      if (lowest_out[i])
        out.sample("fabric_sweep_host_min_out_bytes_per_second", {{"check", check}, {"host", hosts[i]}},
                   *lowest_out[i] * bytes_per_gbit);
    out.family("fabric_sweep_host_min_in_bytes_per_second", "A host's lowest bandwidth from a peer");
    for (std::size_t i = 0; i < n; ++i)
      if (lowest_in[i])
        out.sample("fabric_sweep_host_min_in_bytes_per_second", {{"check", check}, {"host", hosts[i]}},
                   *lowest_in[i] * bytes_per_gbit);
    if (every_pair) {
      out.family("fabric_sweep_pair_bandwidth_bytes_per_second", "A pair's bandwidth in one direction (from, to)");
      for (const auto& p : m.pairs) {
        if (auto d = p.a_to_b())
          out.sample("fabric_sweep_pair_bandwidth_bytes_per_second",
                     {{"check", check}, {"from", hosts[p.a]}, {"to", hosts[p.b]}}, d->gbps * bytes_per_gbit);
        if (auto d = p.b_to_a())
          out.sample("fabric_sweep_pair_bandwidth_bytes_per_second",
                     {{"check", check}, {"from", hosts[p.b]}, {"to", hosts[p.a]}}, d->gbps * bytes_per_gbit);
      }
    }
  } else {
    // No pair measured, no median: a 0 would read as perfect latency.
    if (m.latency_measured()) {
      out.family("fabric_sweep_median_p50_seconds",
                 "The fleet's median of the pairs' median times (round trip, or connection setup: the check label)");
      out.sample("fabric_sweep_median_p50_seconds", {{"check", check}}, m.bar.group.median / us_per_s);
    }
    // Each host's slowest pair: a slow host shows without a series per pair.
    std::vector<std::optional<double>> slowest(n);
    for (const auto& p : m.pairs)
      if (const auto* l = p.latency())
        for (auto h : {p.a, p.b}) slowest[h] = std::max(slowest[h].value_or(l->p50), l->p50);
    out.family("fabric_sweep_host_max_p50_seconds", "A host's slowest pair: the highest median time of its pairs");
    for (std::size_t i = 0; i < n; ++i)
      if (slowest[i])
        out.sample("fabric_sweep_host_max_p50_seconds", {{"check", check}, {"host", hosts[i]}}, *slowest[i] / us_per_s);
    if (every_pair) {
      out.family("fabric_sweep_pair_p50_seconds", "A pair's median time (round trip, or connection setup: the check label)");
      for (const auto& p : m.pairs)
        if (const auto* l = p.latency())
          out.sample("fabric_sweep_pair_p50_seconds", {{"check", check}, {"a", hosts[p.a]}, {"b", hosts[p.b]}},
                     l->p50 / us_per_s);
      out.family("fabric_sweep_pair_p99_seconds", "A pair's 99th percentile time (round trip, or connection setup)");
      for (const auto& p : m.pairs)
        if (const auto* l = p.latency())
          out.sample("fabric_sweep_pair_p99_seconds", {{"check", check}, {"a", hosts[p.a]}, {"b", hosts[p.b]}},
                     l->p99 / us_per_s);
    }
  }
  out.family("fabric_sweep_pair_bad", "1 for a pair that is slow, failed or missing (passing pairs are not listed)");
  for (const auto& p : m.pairs)
    if (is_bad(p.state))
      out.sample("fabric_sweep_pair_bad", {{"a", hosts[p.a]}, {"b", hosts[p.b]}, {"state", state_name(p.state)}}, 1);
  auto bad = m.bad_pairs_by_host();
  out.family("fabric_sweep_host_bad_pairs", "Bad pairs a host is in: the likely culprit has the most");
  for (std::size_t i = 0; i < n; ++i) out.sample("fabric_sweep_host_bad_pairs", {{"host", hosts[i]}}, bad[i]);
  if (m.located) suspect_gauges(out, m.located->found.suspects);
  return out.take();
}

}  // namespace sweep
