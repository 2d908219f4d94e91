// The join of the report's matrix to the locating: pairs in, suspects out.
#include "fabric-sweep/report/locate/join.hpp"

#include <fmt/format.h>

namespace sweep {

std::vector<locate::endpoint_hint> endpoints_of(const matrix& m) {
  std::vector<locate::endpoint_hint> out;
  out.reserve(m.hosts.size());
  for (std::size_t h = 0; h < m.hosts.size(); ++h) {
    auto& e = out.emplace_back();
    e.host = m.hosts[h];
    if (h < m.subnet_ports.size()) {
      e.port_guid = m.subnet_ports[h].guid;
      e.lid = m.subnet_ports[h].lid;
    }
  }
  return out;
}

void locate_pairs(matrix& m, const subnet::fabric& before, const subnet::fabric* after) {
  // A missing pair says nothing of its route: it is neither bad nor good.
  auto handed = [](pair_state s) { return s == pair_state::ok || s == pair_state::slow || s == pair_state::failed; };
  std::vector<locate::judged_pair> pairs;
  pairs.reserve(m.count(pair_state::ok) + m.count(pair_state::slow) + m.count(pair_state::failed));
  fabric_findings f;
  // A sweep on rails meets each pair of hosts through each rail's adapter,
  // a port of its own that the hosts' one endpoint does not name: its
  // pairs are not located, and the suspects are the links with evidence
  // of their own (counters, a link down, below its rate).
  bool by_host = !m.has_rails();
  if (by_host)
    for (const auto& p : m.pairs) {
      if (handed(p.state)) pairs.push_back({p.a, p.b, p.state != pair_state::ok});
      else if (p.state == pair_state::missing) ++f.pairs_left_out;
    }
  else
    m.notes.push_back("the pairs of a sweep on rails are not located on the fabric (each rail's adapter is a port of "
                      "its own): the suspect links are those with evidence of their own");
  f.found = locate::locate(before, after, endpoints_of(m), pairs);
  std::vector<locate::judged_pair>().swap(pairs);
  f.documents = after != nullptr ? 2 : 1;
  f.hosts = m.hosts.size();
  if (!f.found.suspects.empty()) {
    f.suspect_of.assign(m.pairs.size(), locate::no_suspect);
    std::size_t k = 0;
    for (std::size_t i = 0; i < m.pairs.size() && by_host; ++i)
      if (handed(m.pairs[i].state)) f.suspect_of[i] = f.found.explained_by[k++];
  }
  std::vector<std::uint32_t>().swap(f.found.explained_by);
  if (f.pairs_left_out > 0)
    m.notes.push_back(fmt::format("{} missing pair{} left out of the locating on the fabric", f.pairs_left_out,
                                  f.pairs_left_out == 1 ? "" : "s"));
  m.notes.insert(m.notes.end(), std::make_move_iterator(f.found.notes.begin()),
                 std::make_move_iterator(f.found.notes.end()));
  f.found.notes.clear();
  m.located = std::move(f);
}

}  // namespace sweep
