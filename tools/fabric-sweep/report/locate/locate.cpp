// Locating, in three steps. Evidence: each pair's two routes (one walk
// each way through the first document's tables) give every link its
// crossing pairs and bad pairs; the two documents give each link its
// counters' rises, whether it went down, and its rate against its ports'.
// Explanation: greedily, as a set cover, the link that explains the most
// bad pairs not yet explained is named next, each of its pairs weighted
// by how bad the link's traffic is, less the pairs already explained (a
// cable under a fault spoils every pair that crosses it; a healthy link on
// the same routes carries good pairs too), by whether its ends' other links carry good pairs (the
// fault is the link's, not a switch's), and by its physical evidence.
// Once a link is named its bad pairs are explained: the healthy links on
// their routes lose their votes, so they are not named after it. Last,
// links with physical evidence alone. 007 (NSDI 2018) ranks by votes
// alone; the cover is what keeps the other links of the bad routes from
// the top of the list.
#include "locate.hpp"

#include "fabric-sweep/discover/route.hpp"

#include "fabric/base/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

namespace sweep::locate {

using subnet::end;
using subnet::index;

namespace {

/// The best of a mask both ports support, among what either enables
/// (a port that enables nothing it says enables all it supports).
template <class Best>
std::uint8_t best_common(std::uint8_t supported_a, std::uint8_t enabled_a, std::uint8_t supported_b, std::uint8_t enabled_b,
                         Best best) {
  auto sa = supported_a != 0 ? supported_a : enabled_a;
  auto sb = supported_b != 0 ? supported_b : enabled_b;
  auto ca = enabled_a != 0 ? static_cast<std::uint8_t>(enabled_a & sa) : sa;
  auto cb = enabled_b != 0 ? static_cast<std::uint8_t>(enabled_b & sb) : sb;
  return best(static_cast<std::uint8_t>(sa & sb & (ca | cb)));
}

}  // namespace

std::uint8_t expected_width(const subnet::port& a, const subnet::port& b) noexcept {
  return best_common(a.widths_supported, a.widths_enabled, b.widths_supported, b.widths_enabled, subnet::widest);
}

std::uint8_t expected_speed(const subnet::port& a, const subnet::port& b) noexcept {
  return best_common(a.speeds_supported, a.speeds_enabled, b.speeds_supported, b.speeds_enabled, subnet::fastest);
}

namespace {

/// The least a named link must explain: one pair's worth.
constexpr double least_gain = 1.0;

std::string first_word(std::string_view text) {
  auto start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  text.remove_prefix(start);
  return std::string(text.substr(0, text.find_first_of(" \t")));
}

/// The second word of a node description: rdma-ndd's device ("host mlx5_0").
std::string second_word(std::string_view text) {
  auto first = text.find_first_not_of(" \t");
  auto gap = first == std::string_view::npos ? first : text.find_first_of(" \t", first);
  return gap == std::string_view::npos ? std::string() : first_word(text.substr(gap));
}

std::string short_name(std::string_view host) { return std::string(host.substr(0, host.find('.'))); }

/// A list of names for a note: the first few, and how many more.
std::string some(const std::vector<std::string>& names, std::size_t most = 5) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + fabric::printable(names[i]);
  if (names.size() > most) out += fmt::format(" and {} more", names.size() - most);
  return out;
}

/// What the physical evidence says of one link.
struct evidence {
  std::vector<std::pair<std::string, std::uint64_t>> rose;
  std::uint64_t risen = 0;
  bool went_down = false;
  bool below_rate = false;
  std::uint8_t width = 0, width_expected = 0, speed = 0, speed_expected = 0;
  [[nodiscard]] double weight() const noexcept {
    if (went_down || !rose.empty()) return 1.0;
    return below_rate ? 0.5 : 0.0;
  }
};

/// Finds each endpoint's CA port on the fabric.
std::vector<std::optional<end>> find_endpoints(const index& at, const std::vector<endpoint_hint>& endpoints,
                                               location& out) {
  const auto& nodes = at.model().nodes;
  std::unordered_map<std::string, std::vector<std::uint32_t>> by_host;
  for (std::uint32_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].type == subnet::node_type::ca) {
      auto word = first_word(nodes[i].description);
      if (!word.empty()) by_host[short_name(word)].push_back(i);
    }
  auto usable = [&](std::uint32_t n) -> std::optional<end> {
    for (const auto& p : nodes[n].ports)
      if (p.lid != 0 && at.link_of(end{n, p.number})) return end{n, p.number};
    return std::nullopt;
  };
  std::vector<std::optional<end>> found(endpoints.size());
  std::vector<std::string> missing, several;
  for (std::size_t i = 0; i < endpoints.size(); ++i) {
    const auto& e = endpoints[i];
    if (e.port_guid) found[i] = at.port_of_guid(*e.port_guid);
    if (!found[i] && e.lid)
      if (auto p = at.port_of_lid(*e.lid); p && nodes[p->node].type == subnet::node_type::ca) found[i] = p;
    if (!found[i]) {
      auto it = by_host.find(short_name(e.host));
      if (it != by_host.end()) {
        // A rail's adapter is the host's CA of its device, no other.
        for (auto n : it->second)
          if (e.device.empty() || second_word(nodes[n].description) == e.device)
            if ((found[i] = usable(n))) break;
        if (it->second.size() > 1 && e.device.empty()) several.push_back(e.host);
      }
    }
    if (found[i] && at.port_at(*found[i]) != nullptr && at.port_at(*found[i])->lid != 0) ++out.endpoints_found;
    else {
      found[i].reset();
      missing.push_back(e.device.empty() ? e.host : e.host + " " + e.device);
    }
  }
  if (!missing.empty())
    out.notes.push_back(fmt::format("{} host{} not found in the fabric (no channel adapter named so, or no LID): {}",
                                    missing.size(), missing.size() == 1 ? "" : "s", some(missing)));
  if (!several.empty())
    out.notes.push_back(fmt::format("{} host{} with several channel adapters, the first linked one taken: {}",
                                    several.size(), several.size() == 1 ? "" : "s", some(several)));
  return found;
}

/// Whether `after` reads as the same subnet as `before`: most switches
/// (or, without switches, most nodes) of the one are in the other.
bool same_subnet(const subnet::fabric& before, const index& after) {
  std::size_t total = 0, shared = 0;
  bool any_switch = std::any_of(before.nodes.begin(), before.nodes.end(),
                                [](const subnet::node& n) { return n.type == subnet::node_type::switch_node; });
  for (const auto& n : before.nodes) {
    if (any_switch && n.type != subnet::node_type::switch_node) continue;
    ++total;
    shared += after.node_of(n.guid) ? 1 : 0;
  }
  return total == 0 || shared * 2 > total;
}

evidence evidence_of(const index& at, std::uint32_t l, const index* later) {
  evidence ev;
  const auto& k = at.links()[l];
  const auto& nodes = at.model().nodes;
  const subnet::port* ends[2] = {at.port_at(k.a), at.port_at(k.b)};
  const subnet::port* now[2] = {ends[0], ends[1]};
  if (later != nullptr) {
    const auto& ln = later->model().nodes;
    std::optional<std::uint32_t> link_now;
    for (int side = 0; side < 2; ++side) {
      const auto& e = side == 0 ? k.a : k.b;
      auto n = later->node_of(nodes[e.node].guid);
      now[side] = n ? ln[*n].find_port(e.port) : nullptr;
      auto lk = n ? later->link_of(end{*n, e.port}) : std::nullopt;
      if (side == 0) link_now = lk;
      else if (!lk || lk != link_now) link_now.reset();
    }
    bool up = link_now && now[0] != nullptr && now[1] != nullptr && now[0]->state == subnet::port_active &&
              now[1]->state == subnet::port_active;
    ev.went_down = !up;
    for (int side = 0; side < 2 && up; ++side) {
      if (!ends[side]->counters || !now[side]->counters) continue;
      for (const auto& info : subnet::counter_table) {
        if (!info.error) continue;
        auto was = ends[side]->counters->get(info.id), is = now[side]->counters->get(info.id);
        if (!was || !is || *is == *was) continue;
        // A counter below its first reading was cleared in between: all it
        // holds rose since.
        auto rise = *is > *was ? *is - *was : *is;
        if (rise == 0) continue;
        auto name = std::string(info.key);
        auto it = std::find_if(ev.rose.begin(), ev.rose.end(), [&](const auto& r) { return r.first == name; });
        if (it == ev.rose.end()) ev.rose.emplace_back(name, rise);
        else it->second += rise;
        ev.risen += rise;
      }
    }
  }
  const subnet::port* rate[2] = {now[0] != nullptr && !ev.went_down ? now[0] : ends[0],
                                 now[1] != nullptr && !ev.went_down ? now[1] : ends[1]};
  // The two ends say the same of a link that trained; of one that did not
  // quite, the narrower and slower is what the link carries.
  auto narrower = [](std::uint8_t x, std::uint8_t y) {
    if (x == 0 || y == 0) return static_cast<std::uint8_t>(x | y);
    return subnet::lanes(x) <= subnet::lanes(y) ? x : y;
  };
  auto slower = [](std::uint8_t x, std::uint8_t y) {
    if (x == 0 || y == 0) return static_cast<std::uint8_t>(x | y);
    return std::min(x, y);
  };
  ev.width = narrower(rate[0]->width, rate[1]->width);
  ev.speed = slower(rate[0]->speed, rate[1]->speed);
  ev.width_expected = expected_width(*rate[0], *rate[1]);
  ev.speed_expected = expected_speed(*rate[0], *rate[1]);
  ev.below_rate = (ev.width != 0 && ev.width_expected != 0 && subnet::lanes(ev.width) < subnet::lanes(ev.width_expected)) ||
                  (ev.speed != 0 && ev.speed_expected != 0 && ev.speed < ev.speed_expected);
  return ev;
}

std::string word(std::vector<std::string_view> words) { return words.size() == 1 ? std::string(words.front()) : std::string(); }

/// Per-link traffic: pairs crossing, bad, and the bad pairs not yet explained.
struct traffic {
  std::vector<std::uint32_t> crossing, bad, unexplained;
};

/// The routes of every pair, both ways, counted on the links; the bad
/// pairs' links kept (CSR) for the cover.
struct routed {
  traffic t;
  std::vector<std::uint64_t> bad_start{0};  ///< bad pair i's links: bad_links[bad_start[i] .. bad_start[i+1])
  std::vector<std::uint32_t> bad_links;
  std::vector<std::uint32_t> bad_pair;     ///< bad pair i's index among the pairs handed over
};

routed route_pairs(const index& at, const std::vector<std::optional<end>>& found, const std::vector<judged_pair>& pairs,
                   location& out) {
  routed r;
  auto links = at.links().size();
  r.t.crossing.assign(links, 0);
  r.t.bad.assign(links, 0);
  std::array<std::size_t, 5> failed{};
  std::array<std::string, 5> first;
  std::size_t unfound = 0;
  subnet::route there, back;
  std::vector<std::uint32_t> both;
  for (std::uint32_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    if (p.a >= found.size() || p.b >= found.size() || !found[p.a] || !found[p.b] || p.a == p.b) {
      ++unfound;
      ++out.pairs_unrouted;
      continue;
    }
    auto from = *found[p.a], to = *found[p.b];
    subnet::walk_route(at, from, at.port_at(to)->lid, there);
    subnet::walk_route(at, to, at.port_at(from)->lid, back);
    const auto* broken = !there.arrived() ? &there : !back.arrived() ? &back : nullptr;
    if (broken != nullptr) {
      auto kind = static_cast<std::size_t>(broken->ended);
      if (failed[kind]++ == 0) first[kind] = broken->reason;
      ++out.pairs_unrouted;
      continue;
    }
    both.assign(there.links.begin(), there.links.end());
    both.insert(both.end(), back.links.begin(), back.links.end());
    std::sort(both.begin(), both.end());
    both.erase(std::unique(both.begin(), both.end()), both.end());
    for (auto l : both) ++r.t.crossing[l];
    if (p.bad) {
      for (auto l : both) ++r.t.bad[l];
      r.bad_links.insert(r.bad_links.end(), both.begin(), both.end());
      r.bad_start.push_back(r.bad_links.size());
      r.bad_pair.push_back(i);
    }
    ++out.pairs_routed;
  }
  if (unfound > 0)
    out.notes.push_back(fmt::format("{} pair{} with a host not found in the fabric, not located", unfound, unfound == 1 ? "" : "s"));
  static constexpr std::array<std::string_view, 5> what{"", "from a port that is not linked", "through a hole in a forwarding table",
                                                        "into a loop", "to a dead end"};
  for (std::size_t k = 1; k < failed.size(); ++k)
    if (failed[k] > 0)
      out.notes.push_back(fmt::format("{} pair{} whose route leads {}, not located (the first: {})", failed[k],
                                      failed[k] == 1 ? "" : "s", what[k], first[k]));
  r.t.unexplained = r.t.bad;
  return r;
}

/// How much of the traffic on a node's links other than `l` is good; 1
/// when the node has no other traffic (a host's single port).
double good_elsewhere(const traffic& t, std::uint32_t node, std::uint32_t l, const std::vector<std::uint64_t>& node_crossing,
                      const std::vector<std::uint64_t>& node_bad) {
  auto c = node_crossing[node] - t.crossing[l];
  auto b = node_bad[node] - t.bad[l];
  return c == 0 ? 1.0 : static_cast<double>(c - b) / static_cast<double>(c);
}

std::string reason_of(const index& at, std::uint32_t l, const traffic* t, double good_a, double good_b,
                      const evidence& ev, bool named_for_traffic) {
  std::vector<std::string> parts;
  const auto& k = at.links()[l];
  const auto& na = at.at(k.a.node);
  const auto& nb = at.at(k.b.node);
  if (named_for_traffic && t != nullptr) {
    auto part = fmt::format("{} of the {} pairs that cross it were slow or failed", t->bad[l], t->crossing[l]);
    bool host_a = na.type != subnet::node_type::switch_node, host_b = nb.type != subnet::node_type::switch_node;
    if (host_a || host_b)
      part += fmt::format(": {}'s own link, the host or its cable", subnet::node_name(host_a ? na : nb));
    else if (good_a >= 0.5 && good_b >= 0.5)
      part += fmt::format(" while the other links of {} and {} carry good pairs", subnet::node_name(na), subnet::node_name(nb));
    else
      part += fmt::format(", and {}'s other links carry bad pairs too", subnet::node_name(good_a < good_b ? na : nb));
    parts.push_back(std::move(part));
  }
  if (ev.went_down) parts.emplace_back("it went down between the two fabric documents");
  if (!ev.rose.empty()) {
    std::string rose;
    for (const auto& [name, rise] : ev.rose) rose += fmt::format("{}{} by {}", rose.empty() ? "" : ", ", name, rise);
    parts.push_back("its error counters rose: " + rose);
  }
  if (ev.below_rate)
    parts.push_back(fmt::format("it runs at {} {}, its ports can run {} {}", word(subnet::width_words(ev.width)),
                                word(subnet::speed_words(ev.speed)), word(subnet::width_words(ev.width_expected)),
                                word(subnet::speed_words(ev.speed_expected))));
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

suspect suspect_of(const index& at, std::uint32_t l, const traffic& t, const evidence& ev, double score, std::string reason) {
  suspect s;
  const auto& k = at.links()[l];
  for (int side = 0; side < 2; ++side) {
    const auto& e = side == 0 ? k.a : k.b;
    const auto& n = at.at(e.node);
    s.ends[static_cast<std::size_t>(side)] = {n.guid, n.description, e.port, n.type};
  }
  s.pairs_crossing = t.crossing[l];
  s.pairs_bad = t.bad[l];
  s.counters = ev.rose;
  s.went_down = ev.went_down;
  s.width = word(subnet::width_words(ev.width));
  s.width_supported = word(subnet::width_words(ev.width_expected));
  s.speed = word(subnet::speed_words(ev.speed));
  s.speed_supported = word(subnet::speed_words(ev.speed_expected));
  s.score = score;
  s.reason = std::move(reason);
  return s;
}

}  // namespace

std::string link_name(const suspect& s) {
  auto end = [](const suspect_end& e) {
    return fmt::format("{} port {}", e.description.empty() ? subnet::guid_text(e.node_guid) : fabric::printable_utf8(e.description),
                       e.port);
  };
  return end(s.ends[0]) + " - " + end(s.ends[1]);
}

location locate(const subnet::fabric& before, const subnet::fabric* after, const std::vector<endpoint_hint>& endpoints,
                const std::vector<judged_pair>& pairs) {
  location out;
  index at(before);
  std::optional<index> later;
  if (after != nullptr) {
    later.emplace(*after);
    if (!same_subnet(before, *later)) {
      out.notes.emplace_back("the second fabric document is of another subnet (most of its switches are not in the first): "
                             "its counters are not compared");
      later.reset();
    } else if (after->taken_at < before.taken_at) {
      out.notes.emplace_back("the second fabric document was taken before the first: routes are walked in the first, "
                             "counters compared from it to the second");
    }
  }
  if (later && (!before.counters || !after->counters))
    out.notes.emplace_back("a fabric document without counters (--no-counters): no counters compared");

  out.explained_by.assign(pairs.size(), no_suspect);
  auto found = find_endpoints(at, endpoints, out);
  out.links = at.links().size();
  auto r = route_pairs(at, found, pairs, out);
  auto& t = r.t;
  const auto links = at.links().size();
  const auto& nodes = before.nodes;
  std::vector<std::uint64_t> node_crossing(nodes.size()), node_bad(nodes.size());
  for (std::uint32_t l = 0; l < links; ++l)
    for (const auto& e : {at.links()[l].a, at.links()[l].b}) {
      node_crossing[e.node] += t.crossing[l];
      node_bad[e.node] += t.bad[l];
    }
  std::vector<evidence> ev(links);
  for (std::uint32_t l = 0; l < links; ++l) ev[l] = evidence_of(at, l, later ? &*later : nullptr);

  // The bad pairs that cross each link, for the cover.
  auto bad_pairs = r.bad_start.size() - 1;
  std::vector<std::uint64_t> by_link_start(links + 1, 0);
  for (auto l : r.bad_links) ++by_link_start[l + 1];
  std::partial_sum(by_link_start.begin(), by_link_start.end(), by_link_start.begin());
  std::vector<std::uint32_t> by_link(r.bad_links.size());
  {
    auto fill = by_link_start;
    for (std::uint32_t p = 0; p < bad_pairs; ++p)
      for (auto i = r.bad_start[p]; i < r.bad_start[p + 1]; ++i) by_link[fill[r.bad_links[i]]++] = p;
  }
  std::vector<char> explained(bad_pairs, 0), named(links, 0);
  auto gain = [&](std::uint32_t l, double& good_a, double& good_b) {
    if (t.unexplained[l] == 0) return 0.0;
    good_a = good_elsewhere(t, at.links()[l].a.node, l, node_crossing, node_bad);
    good_b = good_elsewhere(t, at.links()[l].b.node, l, node_crossing, node_bad);
    // How bad the link's traffic is, once the bad pairs named links
    // explain are taken out of it: a healthy link on a named link's routes
    // is left with its good pairs.
    auto u = static_cast<double>(t.unexplained[l]);
    double purity = u / static_cast<double>(t.crossing[l] - (t.bad[l] - t.unexplained[l]));
    return u * purity * (0.5 + 0.25 * (good_a + good_b)) * (1.0 + ev[l].weight());
  };
  std::vector<std::uint32_t> live;
  for (std::uint32_t l = 0; l < links; ++l)
    if (t.bad[l] > 0) live.push_back(l);
  while (out.suspects.size() < max_suspects) {
    double best = 0, best_a = 1, best_b = 1;
    std::optional<std::uint32_t> pick;
    for (auto l : live) {
      double ga = 1, gb = 1;
      auto g = gain(l, ga, gb);
      if (g > best || (pick && g == best && t.bad[l] > t.bad[*pick])) {
        best = g;
        best_a = ga;
        best_b = gb;
        pick = l;
      }
    }
    if (!pick || best < least_gain) break;
    auto l = *pick;
    named[l] = 1;
    auto named_as = static_cast<std::uint32_t>(out.suspects.size());
    out.suspects.push_back(suspect_of(at, l, t, ev[l], best, reason_of(at, l, &t, best_a, best_b, ev[l], true)));
    for (auto i = by_link_start[l]; i < by_link_start[l + 1]; ++i) {
      auto p = by_link[i];
      if (explained[p]) continue;
      explained[p] = 1;
      out.explained_by[r.bad_pair[p]] = named_as;
      for (auto j = r.bad_start[p]; j < r.bad_start[p + 1]; ++j) --t.unexplained[r.bad_links[j]];
    }
  }
  // Physical evidence alone: after the links that explain bad pairs, a
  // link that went down, then counters that rose (the most first), then
  // links below their rate.
  std::vector<std::uint32_t> physical;
  for (std::uint32_t l = 0; l < links; ++l)
    if (!named[l] && ev[l].weight() > 0) physical.push_back(l);
  auto physical_score = [&](std::uint32_t l) {
    if (ev[l].went_down) return 0.9;
    if (!ev[l].rose.empty()) return 0.5 + 0.3 * std::min(1.0, std::log10(1.0 + static_cast<double>(ev[l].risen)) / 6.0);
    return 0.25;
  };
  std::stable_sort(physical.begin(), physical.end(),
                   [&](std::uint32_t x, std::uint32_t y) { return physical_score(x) > physical_score(y); });
  std::size_t left_out = 0;
  for (auto l : physical) {
    if (out.suspects.size() >= max_suspects) {
      ++left_out;
      continue;
    }
    out.suspects.push_back(suspect_of(at, l, t, ev[l], physical_score(l), reason_of(at, l, &t, 1, 1, ev[l], false)));
  }
  if (left_out > 0) out.notes.push_back(fmt::format("{} more suspect links left out", left_out));
  return out;
}

}  // namespace sweep::locate
