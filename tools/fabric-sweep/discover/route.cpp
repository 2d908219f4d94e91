#include "route.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace sweep::subnet {

namespace {

bool owns(const port& p, std::uint16_t dlid) {
  auto span = 1U << std::min<unsigned>(p.lmc, 7);
  return p.lid != 0 && dlid >= p.lid && dlid < p.lid + span;
}

void stop(route& out, route_end why, std::string reason) {
  out.ended = why;
  out.reason = std::move(reason);
}

}  // namespace

void walk_route(const index& at, end from, std::uint16_t dlid, route& out) {
  out.links.clear();
  out.ended = route_end::arrived;
  out.reason.clear();
  const auto& nodes = at.model().nodes;
  if (from.node >= nodes.size()) return stop(out, route_end::no_source, "the source is not in the fabric");
  end here = from;
  // A CA sends out of its own port; a switch forwards by its table.
  if (nodes[here.node].type != node_type::switch_node) {
    const auto* p = at.port_at(here);
    if (p != nullptr && owns(*p, dlid)) return;
    auto l = at.link_of(here);
    if (!l) return stop(out, route_end::no_source, fmt::format("{} is not linked", port_name(nodes[here.node], here.port)));
    out.links.push_back(*l);
    here = at.far_end(*l, here);
  }
  std::array<std::uint32_t, max_hops> passed{};
  std::size_t hops = 0;
  while (true) {
    const auto& n = nodes[here.node];
    if (n.type != node_type::switch_node) {
      const auto* p = at.port_at(here);
      if (p != nullptr && owns(*p, dlid)) return;
      return stop(out, route_end::dead_end,
                  fmt::format("LID {} leads to {}, which is not LID {}", dlid, port_name(n, here.port), dlid));
    }
    if (const auto* zero = n.find_port(0); zero != nullptr && owns(*zero, dlid)) return;
    if (std::find(passed.begin(), passed.begin() + hops, here.node) != passed.begin() + hops || hops == max_hops)
      return stop(out, route_end::loop, fmt::format("LID {} loops back to {}", dlid, node_name(n)));
    passed[hops++] = here.node;
    if (dlid >= n.lft.size() || n.lft[dlid] == no_port)
      return stop(out, route_end::hole,
                  fmt::format("{} has no entry for LID {} in its forwarding table", node_name(n), dlid));
    std::uint8_t out_port = n.lft[dlid];
    auto l = out_port == 0 ? std::nullopt : at.link_of(end{here.node, out_port});
    if (!l)
      return stop(out, route_end::dead_end,
                  fmt::format("LID {} leaves by {}, which is not linked", dlid, port_name(n, out_port)));
    out.links.push_back(*l);
    here = at.far_end(*l, end{here.node, out_port});
  }
}

route walk_route(const index& at, end from, std::uint16_t dlid) {
  route r;
  walk_route(at, from, dlid, r);
  return r;
}

}  // namespace sweep::subnet
