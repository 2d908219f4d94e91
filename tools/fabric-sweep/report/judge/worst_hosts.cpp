// The worst hosts: the fewest hosts that account for the bad pairs; and
// the worst rails: each rail's bad pairs.
#include "fabric-sweep/report/judge/judge.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sweep {

namespace {

/// The fewest hosts that account for the pairs `which` picks, greedily:
/// round by round every host with the most such pairs not yet accounted
/// for, while that is two or more; its pairs are then accounted for. What
/// is left is a matching (each host in at most one pair): links, each
/// taking one host more to explain.
struct host_cover {
  std::vector<std::size_t> hosts;  ///< in the order picked
  std::size_t links_left = 0;
};

host_cover cover_of(const matrix& m, bool (*which)(pair_state)) {
  auto n = m.hosts.size();
  std::vector<int> open(n, 0);  // pairs not yet accounted for
  std::size_t left = 0;
  for (const auto& p : m.pairs)
    if (which(p.state)) ++open[p.a], ++open[p.b], ++left;
  std::vector<bool> accounted(m.pairs.size(), false);
  host_cover c;
  for (int most = n ? *std::max_element(open.begin(), open.end()) : 0; most >= 2;
       most = *std::max_element(open.begin(), open.end())) {
    std::vector<std::size_t> picked;
    for (std::size_t i = 0; i < n; ++i)
      if (open[i] == most) picked.push_back(i);
    for (auto i : picked) {
      c.hosts.push_back(i);
      for (std::size_t plane = 0; plane < m.planes.size(); ++plane)
        for (std::size_t k = 0; k < n; ++k) {
          if (k == i) continue;
          auto at = m.index_of(i, k, plane);
          if (!which(m.pairs[at].state) || accounted[at]) continue;
          accounted[at] = true;
          --open[i], --open[k], --left;
        }
    }
  }
  c.links_left = left;
  return c;
}

}  // namespace

std::vector<std::pair<std::string, int>> worst_rails(const matrix& m) {
  if (!m.has_rails()) return {};
  auto names = m.rail_names();
  std::vector<int> bad(names.size(), 0);
  auto at = [&](const std::string& r) { return std::find(names.begin(), names.end(), r) - names.begin(); };
  for (const auto& p : m.pairs)
    if (is_bad(p.state)) {
      const auto& plane = m.planes[p.plane];
      ++bad[at(plane.a_rail)];
      if (plane.b_rail != plane.a_rail) ++bad[at(plane.b_rail)];
    }
  std::vector<std::pair<std::string, int>> out;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (bad[i] > 0) out.emplace_back(names[i], bad[i]);
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  return out;
}

std::vector<std::pair<std::string, int>> worst_hosts(const matrix& m) {
  auto bad = m.bad_pairs_by_host();
  std::vector<std::pair<std::string, int>> out;
  for (auto i : cover_of(m, is_bad).hosts) out.emplace_back(m.hosts[i], bad[i]);
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  return out;
}

}  // namespace sweep
