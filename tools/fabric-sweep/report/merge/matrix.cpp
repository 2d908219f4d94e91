// The matrix's records: a pair's figures and the host order's arithmetic.
#include "fabric-sweep/report/merge/matrix.hpp"

#include "fabric/base/text.hpp"

#include <algorithm>

namespace sweep {

std::string_view state_name(pair_state s) noexcept {
  constexpr std::string_view names[] = {"ok", "slow", "failed", "missing", "unplanned"};
  return names[static_cast<int>(s)];
}

const fabric::latency_summary* merged_pair::latency() const noexcept {
  return std::get_if<fabric::latency_summary>(&figures);
}

std::optional<direction_figures> merged_pair::a_to_b() const noexcept {
  const auto* bw = std::get_if<bandwidth_figures>(&figures);
  if (!bw) return std::nullopt;
  return a_served ? bw->server_to_client : bw->client_to_server;
}

std::optional<direction_figures> merged_pair::b_to_a() const noexcept {
  const auto* bw = std::get_if<bandwidth_figures>(&figures);
  if (!bw) return std::nullopt;
  return a_served ? bw->client_to_server : bw->server_to_client;
}

std::optional<double> merged_pair::figure() const noexcept {
  if (const auto* l = latency()) return l->p50;
  auto ab = a_to_b(), ba = b_to_a();
  if (ab && ba) return std::min(ab->gbps, ba->gbps);
  if (ab) return ab->gbps;
  if (ba) return ba->gbps;
  return std::nullopt;
}

std::string rail_plane::name() const {
  if (a_rail.empty() && b_rail.empty()) return {};
  if (a_rail == b_rail) return "rail " + fabric::printable_utf8(a_rail);
  return "rails " + fabric::printable_utf8(a_rail) + " to " + fabric::printable_utf8(b_rail);
}

std::size_t matrix::index_of(std::size_t i, std::size_t k, std::size_t plane) const noexcept {
  if (i > k) std::swap(i, k);
  auto n = hosts.size();
  return plane * plane_size() + i * n - i * (i + 1) / 2 + (k - i - 1);
}

const merged_pair& matrix::pair_of(std::size_t i, std::size_t k, std::size_t plane) const noexcept {
  return pairs[index_of(i, k, plane)];
}

bool matrix::has_rails() const noexcept {
  return planes.size() > 1 || (planes.size() == 1 && !(planes[0].a_rail.empty() && planes[0].b_rail.empty()));
}

std::vector<std::string> matrix::rail_names() const {
  std::vector<std::string> out;
  for (const auto& p : planes)
    for (const auto* r : {&p.a_rail, &p.b_rail})
      if (!r->empty() && std::find(out.begin(), out.end(), *r) == out.end()) out.push_back(*r);
  return out;
}

std::string matrix::error_of(const merged_pair& p) const {
  std::string text = p.error > 0 && p.error <= errors.size() ? errors[p.error - 1] : std::string();
  return p.every_retest_failed ? "every re-test failed: " + text : text;
}

bool matrix::latency_measured() const noexcept {
  return std::any_of(pairs.begin(), pairs.end(), [](const merged_pair& p) { return p.latency() != nullptr; });
}

void matrix::count_states() noexcept {
  std::fill(std::begin(counts), std::end(counts), 0);
  for (const auto& p : pairs) ++counts[static_cast<int>(p.state)];
}

std::vector<int> matrix::bad_pairs_by_host() const {
  std::vector<int> bad(hosts.size(), 0);
  for (const auto& p : pairs)
    if (is_bad(p.state)) ++bad[p.a], ++bad[p.b];
  return bad;
}

}  // namespace sweep
