// Locating bad pairs on a fabric: the faulty link first, and the healthy
// links of the same routes not named after it.
#include "fabric-sweep/discover/route.hpp"
#include "fabric-sweep/report/locate/locate.hpp"

#include "../subnet/synthetic.hpp"

#include <gtest/gtest.h>

#include <set>

namespace sn = sweep::subnet;
using sweep::locate::endpoint_hint;
using sweep::locate::judged_pair;

namespace {

/// Every CA of the fabric as an endpoint, by its host name.
std::vector<endpoint_hint> hosts_of(const sn::fabric& f) {
  std::vector<endpoint_hint> out;
  for (const auto& n : f.nodes)
    if (n.type == sn::node_type::ca) out.push_back({n.description.substr(0, n.description.find(' ')), {}, {}, {}});
  return out;
}

/// Every pair, bad when `bad(a, b)` says so.
template <class Bad>
std::vector<judged_pair> all_pairs(std::size_t n, Bad bad) {
  std::vector<judged_pair> out;
  for (std::uint32_t a = 0; a < n; ++a)
    for (std::uint32_t b = a + 1; b < n; ++b) out.push_back({a, b, bad(a, b)});
  return out;
}

/// The CA node of endpoint i (the CAs are the fabric's last nodes).
std::uint32_t ca(const sn::fabric& f, std::size_t hosts, std::uint32_t i) {
  return static_cast<std::uint32_t>(f.nodes.size() - hosts + i);
}

/// Whether a pair's routes cross the link at `node`'s `port`.
bool crosses(const sn::index& at, std::uint32_t from, std::uint32_t to, sn::end link_end) {
  auto want = at.link_of(link_end);
  for (auto [x, y] : {std::pair{from, to}, std::pair{to, from}}) {
    auto r = sn::walk_route(at, {x, 1}, at.at(y).ports.front().lid);
    for (auto l : r.links)
      if (l == want) return true;
  }
  return false;
}

bool names(const sweep::locate::suspect& s, std::string_view a, std::string_view b) {
  std::set<std::string> got{s.ends[0].description, s.ends[1].description};
  return got == std::set<std::string>{std::string(a), std::string(b)};
}

}  // namespace

TEST(locate, a_faulty_uplink_ranks_first_and_alone) {
  auto f = synthetic::fat_tree({.leaves = 8, .spines = 4, .hosts = 4});
  sn::index at(f);
  auto hosts = hosts_of(f);
  sn::end uplink{synthetic::node_named(f, "leaf03"), 6};  // leaf03 to spine02
  auto pairs = all_pairs(hosts.size(), [&](auto a, auto b) { return crosses(at, ca(f, hosts.size(), a), ca(f, hosts.size(), b), uplink); });
  auto loc = sweep::locate::locate(f, nullptr, hosts, pairs);
  EXPECT_EQ(loc.endpoints_found, 32u);
  EXPECT_EQ(loc.pairs_routed, pairs.size());
  ASSERT_FALSE(loc.suspects.empty());
  const auto& top = loc.suspects.front();
  EXPECT_TRUE(names(top, "leaf03", "spine02")) << top.ends[0].description << " " << top.ends[1].description;
  EXPECT_EQ(top.pairs_bad, top.pairs_crossing);
  EXPECT_NE(top.reason.find("while the other links of"), std::string::npos) << top.reason;
  EXPECT_EQ(loc.suspects.size(), 1u) << loc.suspects[1].reason;
  // Each bad pair is the uplink's to explain; a good pair no link's.
  ASSERT_EQ(loc.explained_by.size(), pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i)
    EXPECT_EQ(loc.explained_by[i], pairs[i].bad ? 0u : sweep::locate::no_suspect) << i;
}

TEST(locate, a_slow_host_names_its_own_link) {
  auto f = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 4});
  auto hosts = hosts_of(f);
  auto pairs = all_pairs(hosts.size(), [](auto a, auto b) { return a == 6 || b == 6; });
  auto loc = sweep::locate::locate(f, nullptr, hosts, pairs);
  ASSERT_FALSE(loc.suspects.empty());
  EXPECT_TRUE(names(loc.suspects.front(), "host0007 mlx5_0", "leaf02"));
  EXPECT_NE(loc.suspects.front().reason.find("host0007 mlx5_0's own link"), std::string::npos) << loc.suspects.front().reason;
  EXPECT_EQ(loc.suspects.size(), 1u);
}

TEST(locate, a_few_random_bad_pairs_name_no_link) {
  auto f = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 4});
  auto hosts = hosts_of(f);
  auto pairs = all_pairs(hosts.size(), [](auto a, auto b) { return (a == 1 && b == 9) || (a == 4 && b == 14); });
  auto loc = sweep::locate::locate(f, nullptr, hosts, pairs);
  EXPECT_TRUE(loc.suspects.empty()) << loc.suspects.front().reason;
}

TEST(locate, a_core_link_of_three_levels) {
  auto f = synthetic::fat_tree({.leaves = 2, .spines = 2, .hosts = 4, .pods = 4, .cores = 2});
  sn::index at(f);
  auto hosts = hosts_of(f);
  sn::end uplink{synthetic::node_named(f, "agg02-1"), 4};  // agg02-1 to core1-02
  auto pairs = all_pairs(hosts.size(), [&](auto a, auto b) { return crosses(at, ca(f, hosts.size(), a), ca(f, hosts.size(), b), uplink); });
  auto loc = sweep::locate::locate(f, nullptr, hosts, pairs);
  ASSERT_FALSE(loc.suspects.empty());
  EXPECT_TRUE(names(loc.suspects.front(), "agg02-1", "core1-02"));
  EXPECT_EQ(loc.suspects.size(), 1u);
}

TEST(locate, counters_that_rose_and_a_link_that_went_down_without_pairs) {
  auto before = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 2});
  auto after = before;
  after.taken_at += 60;
  auto leaf = synthetic::node_named(after, "leaf02");
  for (auto& p : after.nodes[leaf].ports)
    if (p.number == 3) p.counters->set(sn::counter::symbol_errors, 1000);  // leaf02 to spine01
  auto spine = synthetic::node_named(after, "spine02");
  for (auto& p : after.nodes[spine].ports)
    if (p.number == 4) p.state = 1;  // spine02 to leaf04: Down
  auto loc = sweep::locate::locate(before, &after, {}, {});
  ASSERT_EQ(loc.suspects.size(), 2u);
  EXPECT_TRUE(names(loc.suspects[0], "leaf04", "spine02"));
  EXPECT_TRUE(loc.suspects[0].went_down);
  EXPECT_TRUE(names(loc.suspects[1], "leaf02", "spine01"));
  ASSERT_EQ(loc.suspects[1].counters.size(), 1u);
  EXPECT_EQ(loc.suspects[1].counters[0], (std::pair<std::string, std::uint64_t>{"symbol_errors", 1000}));
  EXPECT_NE(loc.suspects[1].reason.find("Its error counters rose: symbol_errors by 1000"), std::string::npos) << loc.suspects[1].reason;
}

TEST(locate, errors_on_the_link_of_the_bad_pairs_raise_it) {
  auto before = synthetic::fat_tree({.leaves = 8, .spines = 4, .hosts = 4});
  sn::index at(before);
  auto after = before;
  sn::end uplink{synthetic::node_named(before, "leaf05"), 7};  // leaf05 to spine03
  for (auto& p : after.nodes[uplink.node].ports)
    if (p.number == 7) p.counters->set(sn::counter::rcv_errors, 5);
  auto hosts = hosts_of(before);
  auto n = hosts.size();
  auto pairs = all_pairs(n, [&](auto a, auto b) { return crosses(at, ca(before, n, a), ca(before, n, b), uplink); });
  auto plain = sweep::locate::locate(before, nullptr, hosts, pairs);
  auto loc = sweep::locate::locate(before, &after, hosts, pairs);
  ASSERT_FALSE(loc.suspects.empty());
  EXPECT_TRUE(names(loc.suspects.front(), "leaf05", "spine03"));
  EXPECT_GT(loc.suspects.front().score, plain.suspects.front().score);
  EXPECT_EQ(loc.suspects.size(), 1u);
}

TEST(locate, a_link_below_the_width_its_ports_can_run) {
  auto f = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 2});
  auto leaf = synthetic::node_named(f, "leaf03");
  for (auto& p : f.nodes[leaf].ports)
    if (p.number == 4) {  // leaf03 to spine02
      p.width = 1;
      p.widths_enabled = 1;
    }
  auto loc = sweep::locate::locate(f, nullptr, {}, {});
  ASSERT_EQ(loc.suspects.size(), 1u);
  const auto& s = loc.suspects.front();
  EXPECT_TRUE(names(s, "leaf03", "spine02"));
  EXPECT_EQ(s.width, "1X");
  EXPECT_EQ(s.width_supported, "4X");
  EXPECT_NE(s.reason.find("runs at 1X EDR, its ports can run 4X EDR"), std::string::npos) << s.reason;
  // Both ends set to 1X on purpose: what they enable, not a fault.
  auto spine = synthetic::node_named(f, "spine02");
  for (auto& p : f.nodes[spine].ports)
    if (p.number == 3) p.widths_enabled = 1;
  EXPECT_TRUE(sweep::locate::locate(f, nullptr, {}, {}).suspects.empty());
}

TEST(locate, hosts_not_found_routes_out_of_the_tables_and_another_subnet_are_notes) {
  auto f = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 2});
  auto hosts = hosts_of(f);
  hosts.push_back({"stranger", {}, {}, {}});
  hosts[0] = {"renamed", f.nodes[f.nodes.size() - 8].ports.front().guid, {}, {}};  // found by its port GUID
  hosts[1] = {"by-lid", {}, f.nodes[f.nodes.size() - 7].ports.front().lid, {}};
  auto leaf = synthetic::node_named(f, "leaf01");
  f.nodes[leaf].lft[f.nodes.back().ports.front().lid] = sn::no_port;  // a hole towards host0008
  auto pairs = all_pairs(hosts.size(), [](auto, auto) { return false; });
  auto other = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 2});
  for (auto& n : other.nodes) n.guid ^= 0xABCD0000;
  auto loc = sweep::locate::locate(f, &other, hosts, pairs);
  EXPECT_EQ(loc.endpoints_found, 8u);
  std::string notes;
  for (const auto& n : loc.notes) notes += n + "\n";
  EXPECT_NE(notes.find("1 host not found in the fabric (no channel adapter named so, or no LID): stranger"), std::string::npos) << notes;
  EXPECT_NE(notes.find("8 pairs with a host not found"), std::string::npos) << notes;
  EXPECT_NE(notes.find("through a hole in a forwarding table, not located (the first: leaf01 has no entry"), std::string::npos) << notes;
  EXPECT_NE(notes.find("another subnet"), std::string::npos) << notes;
  EXPECT_EQ(loc.pairs_routed + loc.pairs_unrouted, pairs.size());
}
