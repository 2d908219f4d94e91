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
#include <array>

namespace sweep {

namespace {

using fabric::cli::exposition;

constexpr double us_per_s = 1e6;
constexpr double bytes_per_gbit = 1e9 / 8;

/// The ends the per-host gauges are of: each host, or with rails each
/// host's rail (a host's every rail: a rail slower than its siblings shows
/// on its own series), and their labels.
class ends {
public:
  explicit ends(const matrix& m) : m_(m), rails_(m.rail_names()) {
    hosts_.reserve(m.hosts.size());
    for (const auto& h : m.hosts) hosts_.push_back(fabric::printable_utf8(h));
    for (auto& r : rails_) r = fabric::printable_utf8(r);
    auto index = [&](const std::string& r) {
      return static_cast<std::size_t>(std::find(rails_.begin(), rails_.end(), fabric::printable_utf8(r)) - rails_.begin());
    };
    for (const auto& plane : m.planes) planes_.emplace_back(index(plane.a_rail), index(plane.b_rail));
  }
  [[nodiscard]] std::size_t size() const { return m_.hosts.size() * per_host(); }
  /// The ends of a pair: host a's on its rail, and b's.
  [[nodiscard]] std::size_t a_of(const merged_pair& p) const { return p.a * per_host() + planes_[p.plane].first % per_host(); }
  [[nodiscard]] std::size_t b_of(const merged_pair& p) const { return p.b * per_host() + planes_[p.plane].second % per_host(); }
  [[nodiscard]] const std::string& host(std::size_t end) const { return hosts_[end / per_host()]; }
  /// An end's labels after `first`: its host, and its rail with rails.
  [[nodiscard]] std::vector<exposition::label> labels(std::size_t end,
                                                      std::initializer_list<exposition::label> first = {}) const {
    std::vector<exposition::label> out(first);
    out.emplace_back("host", host(end));
    if (!rails_.empty()) out.emplace_back("rail", rails_[end % per_host()]);
    return out;
  }
  /// A pair's labels after `first`: its hosts (`a`, `b`), and with rails
  /// their rails (`a_rail`, `b_rail`).
  [[nodiscard]] std::vector<exposition::label> pair_labels(const merged_pair& p,
                                                           std::initializer_list<exposition::label> first = {}) const {
    return sides(p, false, {"a", "b", "a_rail", "b_rail"}, first);
  }
  /// One direction's labels after `first`: `from` and `to` (a to b, or b
  /// to a when `back`), and with rails `from_rail`, `to_rail`.
  [[nodiscard]] std::vector<exposition::label> direction_labels(const merged_pair& p, bool back,
                                                                std::initializer_list<exposition::label> first = {}) const {
    return sides(p, back, {"from", "to", "from_rail", "to_rail"}, first);
  }

private:
  /// The labels of a pair's two sides, keyed `keys` (first host, second
  /// host, their rails), the first side b's when `back`.
  [[nodiscard]] std::vector<exposition::label> sides(const merged_pair& p, bool back, const std::array<std::string_view, 4>& keys,
                                                     std::initializer_list<exposition::label> first) const {
    auto [x_rail, y_rail] = planes_[p.plane];
    auto x = p.a, y = p.b;
    if (back) std::swap(x, y), std::swap(x_rail, y_rail);
    std::vector<exposition::label> out(first);
    out.emplace_back(keys[0], hosts_[x]);
    out.emplace_back(keys[1], hosts_[y]);
    if (!rails_.empty()) {
      out.emplace_back(keys[2], rails_[x_rail]);
      out.emplace_back(keys[3], rails_[y_rail]);
    }
    return out;
  }
  [[nodiscard]] std::size_t per_host() const { return std::max<std::size_t>(rails_.size(), 1); }
  const matrix& m_;
  std::vector<std::string> hosts_, rails_;
  std::vector<std::pair<std::size_t, std::size_t>> planes_;
};

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
  // Label values as every rendering writes a name: UTF-8 as it is, a
  // control character as the text \xNN.
  const ends at(m);
  auto n = at.size();
  if (measures_bandwidth(m.check)) {
    if (auto bar = m.bar.value) {
      out.family("fabric_sweep_bar_bytes_per_second", "The bandwidth below which a pair is slow");
      out.sample("fabric_sweep_bar_bytes_per_second", {{"check", check}}, *bar * bytes_per_gbit);
    }
    // Each host's (each rail's) lowest bandwidth to a peer and from one:
    // a bad link or a bad host shows without a series per pair.
    std::vector<std::optional<double>> lowest_out(n), lowest_in(n);
    auto lower = [](std::optional<double>& to, double v) { to = std::min(to.value_or(v), v); };
    for (const auto& p : m.pairs) {
      auto a = at.a_of(p), b = at.b_of(p);
      if (auto d = p.a_to_b()) lower(lowest_out[a], d->gbps), lower(lowest_in[b], d->gbps);
      if (auto d = p.b_to_a()) lower(lowest_out[b], d->gbps), lower(lowest_in[a], d->gbps);
    }
    out.family("fabric_sweep_host_min_out_bytes_per_second", "A host's lowest bandwidth to a peer (with rails, a rail's)");
    for (std::size_t i = 0; i < n; ++i)
      if (lowest_out[i])
        out.sample_with("fabric_sweep_host_min_out_bytes_per_second", at.labels(i, {{"check", check}}),
                        *lowest_out[i] * bytes_per_gbit);
    out.family("fabric_sweep_host_min_in_bytes_per_second", "A host's lowest bandwidth from a peer (with rails, a rail's)");
    for (std::size_t i = 0; i < n; ++i)
      if (lowest_in[i])
        out.sample_with("fabric_sweep_host_min_in_bytes_per_second", at.labels(i, {{"check", check}}),
                        *lowest_in[i] * bytes_per_gbit);
    if (every_pair) {
      out.family("fabric_sweep_pair_bandwidth_bytes_per_second", "A pair's bandwidth in one direction (from, to)");
      for (const auto& p : m.pairs) {
        if (auto d = p.a_to_b())
          out.sample_with("fabric_sweep_pair_bandwidth_bytes_per_second", at.direction_labels(p, false, {{"check", check}}),
                          d->gbps * bytes_per_gbit);
        if (auto d = p.b_to_a())
          out.sample_with("fabric_sweep_pair_bandwidth_bytes_per_second", at.direction_labels(p, true, {{"check", check}}),
                          d->gbps * bytes_per_gbit);
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
        for (auto h : {at.a_of(p), at.b_of(p)}) slowest[h] = std::max(slowest[h].value_or(l->p50), l->p50);
    out.family("fabric_sweep_host_max_p50_seconds",
               "A host's slowest pair: the highest median time of its pairs (with rails, a rail's)");
    for (std::size_t i = 0; i < n; ++i)
      if (slowest[i])
        out.sample_with("fabric_sweep_host_max_p50_seconds", at.labels(i, {{"check", check}}), *slowest[i] / us_per_s);
    if (every_pair) {
      out.family("fabric_sweep_pair_p50_seconds", "A pair's median time (round trip, or connection setup: the check label)");
      for (const auto& p : m.pairs)
        if (const auto* l = p.latency())
          out.sample_with("fabric_sweep_pair_p50_seconds", at.pair_labels(p, {{"check", check}}), l->p50 / us_per_s);
      out.family("fabric_sweep_pair_p99_seconds", "A pair's 99th percentile time (round trip, or connection setup)");
      for (const auto& p : m.pairs)
        if (const auto* l = p.latency())
          out.sample_with("fabric_sweep_pair_p99_seconds", at.pair_labels(p, {{"check", check}}), l->p99 / us_per_s);
    }
  }
  out.family("fabric_sweep_pair_bad", "1 for a pair that is slow, failed or missing (passing pairs are not listed)");
  for (const auto& p : m.pairs)
    if (is_bad(p.state)) {
      auto labels = at.pair_labels(p);
      labels.emplace_back("state", state_name(p.state));
      out.sample_with("fabric_sweep_pair_bad", labels, 1);
    }
  std::vector<int> bad(n, 0);
  for (const auto& p : m.pairs)
    if (is_bad(p.state)) ++bad[at.a_of(p)], ++bad[at.b_of(p)];
  out.family("fabric_sweep_host_bad_pairs", "Bad pairs a host is in (with rails, a rail's): the likely culprit has the most");
  for (std::size_t i = 0; i < n; ++i) out.sample_with("fabric_sweep_host_bad_pairs", at.labels(i), bad[i]);
  if (m.located) suspect_gauges(out, m.located->found.suspects);
  return out.take();
}

}  // namespace sweep
