#pragma once
// A fat tree built in memory, its forwarding tables routed up/down as a
// subnet manager would: for the unit tests, the locate driver's checks and
// the benchmark, where no simulator is needed. Two levels: `leaves` leaf
// switches with `hosts` CAs each, each leaf linked to every one of `spines`.
// Three levels (pods > 0): each pod has `leaves` edge switches and
// `spines` aggregation switches, all linked; aggregation switch j of every
// pod links to `cores` core switches of group j. CAs are "hostNNNN mlx5_0".

#include "fabric-sweep/discover/subnet.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace synthetic {

namespace sn = sweep::subnet;

struct shape {
  int leaves = 4, spines = 2, hosts = 4;
  int pods = 0, cores = 2;
  int host_count = -1;  ///< leave out CAs beyond this many (-1: all)
};

inline sn::port make_port(std::uint8_t number, std::uint64_t guid, std::uint16_t lid) {
  sn::port p;
  p.number = number;
  p.guid = guid;
  p.lid = lid;
  p.state = sn::port_active;
  p.physical_state = sn::physical_link_up;
  p.width = 2;  // 4X
  p.widths_enabled = 3;
  p.widths_supported = 3;
  p.speed = 32;  // EDR
  p.speeds_enabled = 32 | 16 | 7;
  p.speeds_supported = 32 | 16 | 7;
  sn::port_counters c;
  for (const auto& info : sn::counter_table) c.set(info.id, 0);
  c.extended = true;
  p.counters = c;
  return p;
}

struct builder {
  sn::fabric f;
  std::vector<std::vector<std::uint8_t>> up;  // per switch: ports towards the top

  std::uint32_t add_switch(const std::string& name, int ports) {
    sn::node n;
    n.guid = 0x0200000000000000ULL + f.nodes.size();
    n.type = sn::node_type::switch_node;
    n.description = name;
    n.port_count = static_cast<std::uint8_t>(ports);
    n.ports.push_back(make_port(0, n.guid, static_cast<std::uint16_t>(f.nodes.size() + 1)));
    n.ports.back().counters.reset();
    f.nodes.push_back(std::move(n));
    return static_cast<std::uint32_t>(f.nodes.size() - 1);
  }
  std::uint32_t add_host(int number, std::uint16_t lid) {
    sn::node n;
    n.guid = 0x0100000000000000ULL + static_cast<std::uint64_t>(number) * 2;
    n.type = sn::node_type::ca;
    n.description = fmt::format("host{:04d} mlx5_0", number);
    n.port_count = 1;
    n.ports.push_back(make_port(1, n.guid + 1, lid));
    f.nodes.push_back(std::move(n));
    return static_cast<std::uint32_t>(f.nodes.size() - 1);
  }
  sn::port& port_of(std::uint32_t node, std::uint8_t number) {
    auto& ports = f.nodes[node].ports;
    for (auto& p : ports)
      if (p.number == number) return p;
    auto lid = f.nodes[node].ports.front().lid;
    ports.push_back(make_port(number, f.nodes[node].guid, lid));
    return ports.back();
  }
  void link(std::uint32_t a, std::uint8_t pa, std::uint32_t b, std::uint8_t pb) {
    port_of(a, pa).peer = sn::peer_ref{f.nodes[b].guid, pb};
    port_of(b, pb).peer = sn::peer_ref{f.nodes[a].guid, pa};
  }
};

/// The fabric; its CAs are the last nodes, in host order.
inline sn::fabric fat_tree(const shape& s) {
  builder b;
  struct edge_info {
    std::uint32_t node;
    int pod;
    std::vector<std::uint32_t> hosts;
  };
  std::vector<edge_info> edges;
  std::vector<std::vector<std::uint32_t>> aggs;   // per pod (three levels) or one list of spines
  std::vector<std::vector<std::uint32_t>> cores;  // per group
  int pods = s.pods == 0 ? 1 : s.pods;
  if (s.pods > 0)
    for (int g = 0; g < s.spines; ++g) {
      cores.emplace_back();
      for (int c = 0; c < s.cores; ++c) cores.back().push_back(b.add_switch(fmt::format("core{}-{:02d}", g + 1, c + 1), 36));
    }
  for (int p = 0; p < pods; ++p) {
    aggs.emplace_back();
    for (int j = 0; j < s.spines; ++j)
      aggs.back().push_back(b.add_switch(s.pods > 0 ? fmt::format("agg{:02d}-{}", p + 1, j + 1) : fmt::format("spine{:02d}", j + 1), 36));
    for (int i = 0; i < s.leaves; ++i)
      edges.push_back({b.add_switch(s.pods > 0 ? fmt::format("edge{:02d}-{:02d}", p + 1, i + 1) : fmt::format("leaf{:02d}", i + 1), 36), p, {}});
  }
  int total = s.host_count >= 0 ? s.host_count : pods * s.leaves * s.hosts;
  int number = 0;
  auto first_host_lid = static_cast<std::uint16_t>(b.f.nodes.size() + 1);
  for (auto& e : edges)
    for (int h = 0; h < s.hosts && number < total; ++h) {
      auto node = b.add_host(number + 1, static_cast<std::uint16_t>(first_host_lid + number));
      b.link(e.node, static_cast<std::uint8_t>(h + 1), node, 1);
      e.hosts.push_back(node);
      ++number;
    }
  for (std::size_t i = 0; i < edges.size(); ++i) {
    auto& e = edges[i];
    int within = static_cast<int>(i) % s.leaves;
    for (int j = 0; j < s.spines; ++j)
      b.link(e.node, static_cast<std::uint8_t>(s.hosts + 1 + j), aggs[static_cast<std::size_t>(e.pod)][static_cast<std::size_t>(j)],
             static_cast<std::uint8_t>(within + 1));
  }
  for (int p = 0; p < s.pods; ++p)
    for (int j = 0; j < s.spines; ++j)
      for (int c = 0; c < s.cores; ++c)
        b.link(aggs[static_cast<std::size_t>(p)][static_cast<std::size_t>(j)], static_cast<std::uint8_t>(s.leaves + 1 + c),
               cores[static_cast<std::size_t>(j)][static_cast<std::size_t>(c)], static_cast<std::uint8_t>(p + 1));
  // Up/down routes: each destination LID goes up by LID (its spread over
  // the uplinks) until a switch above it, then down.
  auto top = static_cast<std::size_t>(first_host_lid + number);
  for (auto& n : b.f.nodes)
    if (n.type == sn::node_type::switch_node) {
      n.lft.assign(top, sn::no_port);
      n.lft[n.ports.front().lid] = 0;
    }
  for (std::size_t i = 0; i < edges.size(); ++i) {
    const auto& e = edges[i];
    int within = static_cast<int>(i) % s.leaves;
    for (std::size_t h = 0; h < e.hosts.size(); ++h) {
      auto lid = b.f.nodes[e.hosts[h]].ports.front().lid;
      for (std::size_t k = 0; k < edges.size(); ++k)
        b.f.nodes[edges[k].node].lft[lid] =
            k == i ? static_cast<std::uint8_t>(h + 1) : static_cast<std::uint8_t>(s.hosts + 1 + lid % s.spines);
      for (int p = 0; p < pods; ++p)
        for (int j = 0; j < s.spines; ++j) {
          auto& agg = b.f.nodes[aggs[static_cast<std::size_t>(p)][static_cast<std::size_t>(j)]];
          agg.lft[lid] = p == e.pod ? static_cast<std::uint8_t>(within + 1)
                                    : static_cast<std::uint8_t>(s.leaves + 1 + (lid / s.spines) % s.cores);
        }
      for (int j = 0; j < s.spines && s.pods > 0; ++j)
        for (int c = 0; c < s.cores; ++c)
          b.f.nodes[cores[static_cast<std::size_t>(j)][static_cast<std::size_t>(c)]].lft[lid] = static_cast<std::uint8_t>(e.pod + 1);
    }
  }
  for (auto& n : b.f.nodes)
    std::sort(n.ports.begin(), n.ports.end(), [](const sn::port& x, const sn::port& y) { return x.number < y.number; });
  b.f.taken_at = 1.8e9;
  b.f.device = "mlx5_0";
  b.f.port = 1;
  b.f.from_node_guid = b.f.nodes.back().guid;
  b.f.from_lid = b.f.nodes.back().ports.front().lid;
  return b.f;
}

/// The node of a switch or host by its description.
inline std::uint32_t node_named(const sn::fabric& f, std::string_view description) {
  for (std::uint32_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].description == description) return i;
  throw std::runtime_error("no node " + std::string(description));
}

}  // namespace synthetic
