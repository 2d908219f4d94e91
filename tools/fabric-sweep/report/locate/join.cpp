// The join of the report's matrix to the locating: pairs in, suspects out.
#include "fabric-sweep/report/locate/join.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace sweep {

namespace {

/// An intra matrix's name for a host's rail: its end.
std::string end_name(const std::string& host, const std::string& rail) { return fmt::format("{}/{}", host, rail); }

/// The ends the locating looks for, one per host; with rails, one per
/// host's rail, host after host (end host * rails + rail); an intra
/// matrix's hosts are its ends already ("host/rail").
struct ends {
  std::vector<locate::endpoint_hint> hints;
  std::vector<std::string> rails;  ///< with rails (not intra): the rails' names, in an end's order
};

ends ends_of(const matrix& m) {
  ends out;
  out.hints.reserve(m.hosts.size());
  // A rail's port is its adapter's, as its host's lines said it; without
  // their word, the adapter is the CA "host rail" (auto rails are named
  // after their devices).
  std::unordered_map<std::string, const matrix::rail_port*> rail_ports;
  for (const auto& r : m.rail_ports) rail_ports.emplace(end_name(r.host, r.rail), &r);
  auto rail_end = [&](const std::string& host, const std::string& rail, const std::string& end) {
    locate::endpoint_hint e;
    e.host = host;
    e.device = rail;
    if (auto it = rail_ports.find(end); it != rail_ports.end()) {
      if (!it->second->device.empty()) e.device = it->second->device;
      e.port_guid = it->second->ids.guid;
      e.lid = it->second->ids.lid;
    }
    return e;
  };
  if (m.check == check::intra) {
    for (const auto& end : m.hosts) {
      auto it = rail_ports.find(end);
      if (it != rail_ports.end()) out.hints.push_back(rail_end(it->second->host, it->second->rail, end));
      else out.hints.emplace_back().host = end;  // its rails unsaid: not found
    }
  } else if (m.has_rails()) {
    out.rails = m.rail_names();
    out.hints.reserve(m.hosts.size() * out.rails.size());
    for (const auto& host : m.hosts)
      for (const auto& rail : out.rails) out.hints.push_back(rail_end(host, rail, end_name(host, rail)));
  } else {
    for (std::size_t h = 0; h < m.hosts.size(); ++h) {
      auto& e = out.hints.emplace_back();
      e.host = m.hosts[h];
      if (h < m.subnet_ports.size()) {
        e.port_guid = m.subnet_ports[h].guid;
        e.lid = m.subnet_ports[h].lid;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<locate::endpoint_hint> endpoints_of(const matrix& m) { return ends_of(m).hints; }

void locate_pairs(matrix& m, const subnet::fabric& before, const subnet::fabric* after) {
  // A missing pair says nothing of its route: it is neither bad nor good.
  auto handed = [](pair_state s) { return s == pair_state::ok || s == pair_state::slow || s == pair_state::failed; };
  auto found_ends = ends_of(m);
  // With rails, a pair's ends are its hosts' adapters of its plane's rails.
  const auto& rails = found_ends.rails;
  auto rail_at = [&](const std::string& rail) {  // 0 without rails
    return static_cast<std::uint32_t>(rails.empty() ? 0 : std::find(rails.begin(), rails.end(), rail) - rails.begin());
  };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> plane_rails;
  for (const auto& plane : m.planes) plane_rails.emplace_back(rail_at(plane.a_rail), rail_at(plane.b_rail));
  auto stride = std::max<std::uint32_t>(static_cast<std::uint32_t>(rails.size()), 1);
  std::vector<locate::judged_pair> pairs;
  pairs.reserve(m.count(pair_state::ok) + m.count(pair_state::slow) + m.count(pair_state::failed));
  fabric_findings f;
  for (const auto& p : m.pairs) {
    if (handed(p.state)) {
      auto [ra, rb] = plane_rails[p.plane];
      pairs.push_back({p.a * stride + ra, p.b * stride + rb, p.state != pair_state::ok});
    } else if (p.state == pair_state::missing) {
      ++f.pairs_left_out;
    }
  }
  f.found = locate::locate(before, after, found_ends.hints, pairs);
  std::vector<locate::judged_pair>().swap(pairs);
  f.documents = after != nullptr ? 2 : 1;
  f.hosts = found_ends.hints.size();
  f.rails = m.has_rails() || m.check == check::intra;
  if (!f.found.suspects.empty()) {
    f.suspect_of.assign(m.pairs.size(), locate::no_suspect);
    std::size_t k = 0;
    for (std::size_t i = 0; i < m.pairs.size(); ++i)
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
