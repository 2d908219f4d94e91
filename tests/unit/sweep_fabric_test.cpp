// fabric-sweep report with --fabric: each host's port as its lines give it,
// the judged pairs handed to the locating, and the suspects in every
// rendering. The locating's own rules: locate_test.cpp.
#include "fabric-sweep/discover/route.hpp"
#include "fabric-sweep/report/report.hpp"

#include "../subnet/synthetic.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <gtest/gtest.h>

namespace {

const sweep::verdict_options defaults{};

nlohmann::json event(const std::string& kind, nlohmann::json payload) {
  return {{"tool", "fabric-sweep"}, {"event", kind}, {kind, std::move(payload)}};
}

/// A pair line as a rank prints it, the writing side's port in `extra`.
std::string pair_line(const std::string& server, const std::string& client, const std::string& side, bool ok, double p50,
                      const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json pair{{"kind", "pair"}, {"ok", ok},        {"error", ok ? nlohmann::json(nullptr) : nlohmann::json("timed out")},
                      {"round", 1},     {"sweep", 1},      {"retest", false},
                      {"server", server}, {"client", client}, {"side", side}, {"check", "ping"}};
  if (ok && side == "client") pair["latency"] = {{"count", 10}, {"p50_us", p50}, {"p99_us", p50 * 1.2}};
  for (const auto& [k, v] : extra.items()) pair[k] = v;
  return event("result", pair).dump();
}

std::size_t host_index(const sweep::matrix& m, const std::string& h) {
  return static_cast<std::size_t>(std::find(m.hosts.begin(), m.hosts.end(), h) - m.hosts.begin());
}

}  // namespace

TEST(sweep_report_ports, a_hosts_port_in_the_subnet_from_its_adapter_else_its_pair_lines) {
  nlohmann::json adapter{{"device", "mlx5_0"}, {"port", 1}, {"link_layer", "InfiniBand"}, {"mtu", 4096},
                         {"width", "4X"},      {"speed", "EDR"}, {"rate_gbps", 100}, {"data_rate_gbps", 96.8},
                         {"node_guid", "0x0000000000000a00"}, {"port_guid", "0x0000000000000a01"}, {"lid", 5}};
  std::vector<std::string> lines{
      event("started", {{"host", "a"}, {"hosts", {"a", "b", "c"}}, {"adapter", adapter}}).dump(),
      // a's pair line says another port: the adapter's word stands.
      pair_line("a", "b", "server", true, 0, {{"port_guid", "0x0000000000000fff"}, {"lid", 99}}),
      // b and c ran with -j: their pair lines alone say where they are.
      pair_line("a", "b", "client", true, 10, {{"port_guid", "0x0000000000000b01"}, {"lid", 6}}),
      pair_line("b", "c", "client", true, 10, {{"port_guid", "0x0000000000000c01"}, {"lid", nullptr}}),
      pair_line("b", "c", "server", true, 0, {{"port_guid", nullptr}, {"lid", nullptr}}),
      pair_line("a", "c", "client", true, 10)};
  auto m = sweep::merge(lines, defaults);
  ASSERT_EQ(m.subnet_ports.size(), 3u);
  const auto& a = m.subnet_ports[host_index(m, "a")];
  const auto& b = m.subnet_ports[host_index(m, "b")];
  const auto& c = m.subnet_ports[host_index(m, "c")];
  EXPECT_EQ(a.guid, 0xa01u);
  EXPECT_EQ(a.lid, 5);
  EXPECT_EQ(b.guid, 0xb01u);
  EXPECT_EQ(b.lid, 6);
  EXPECT_EQ(c.guid, 0xc01u);
  EXPECT_FALSE(c.lid);
}

TEST(sweep_report_ports, a_port_guid_that_is_not_one_makes_its_pair_line_a_wrong_shape) {
  auto m = sweep::merge({pair_line("a", "b", "client", true, 10, {{"port_guid", "0xnothex"}}),
                         pair_line("a", "b", "server", true, 0, {{"lid", -3}}), pair_line("a", "c", "client", true, 10)},
                        defaults);
  EXPECT_TRUE(std::any_of(m.notes.begin(), m.notes.end(),
                          [](const std::string& n) { return n.find("2 pair lines of a wrong shape") != std::string::npos; }))
      << fmt::format("{}", fmt::join(m.notes, "|"));
  for (const auto& p : m.subnet_ports) EXPECT_FALSE(p.known());
}

namespace {

namespace sn = sweep::subnet;

/// Whether the pair of CA nodes x and y crosses the link at `e`, either way.
bool crosses(const sn::index& at, std::uint32_t x, std::uint32_t y, sn::end e) {
  auto want = at.link_of(e);
  for (auto [from, to] : {std::pair{x, y}, std::pair{y, x}}) {
    auto r = sn::walk_route(at, {from, 1}, at.at(to).ports.front().lid);
    if (std::find(r.links.begin(), r.links.end(), *want) != r.links.end()) return true;
  }
  return false;
}

/// A sweep of every pair of `f`'s hosts, as their client lines: the pairs
/// that cross `bad` slow (or failed), the pair `missing` not reported.
std::vector<std::string> sweep_of(const sn::fabric& f, std::optional<sn::end> bad, bool failed = false,
                                  std::pair<std::string, std::string> missing = {}) {
  sn::index at(f);
  std::vector<std::uint32_t> ca;
  for (std::uint32_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].type == sn::node_type::ca) ca.push_back(i);
  auto name = [&](std::uint32_t n) { return f.nodes[n].description.substr(0, f.nodes[n].description.find(' ')); };
  std::vector<std::string> lines;
  for (std::size_t a = 0; a < ca.size(); ++a)
    for (std::size_t b = a + 1; b < ca.size(); ++b) {
      if (std::pair{name(ca[a]), name(ca[b])} == missing) continue;
      bool slow = bad && crosses(at, ca[a], ca[b], *bad);
      double p50 = 20 + static_cast<double>((a * 7 + b * 3) % 10) / 10;
      lines.push_back(pair_line(name(ca[a]), name(ca[b]), "client", !(slow && failed), slow ? p50 * 4 : p50));
    }
  return lines;
}

}  // namespace

TEST(sweep_report_fabric, the_faulty_uplink_first_and_each_bad_pair_explained_by_it) {
  auto f = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 4});
  sn::end uplink{synthetic::node_named(f, "leaf02"), 6};  // leaf02 to spine02
  auto m = sweep::merge(sweep_of(f, uplink, false, {"host0001", "host0002"}), defaults);
  ASSERT_GT(m.count(sweep::pair_state::slow), 0u);
  sweep::locate_pairs(m, f, nullptr);
  ASSERT_TRUE(m.located);
  const auto& found = m.located->found;
  ASSERT_FALSE(found.suspects.empty());
  EXPECT_EQ(sweep::locate::link_name(found.suspects.front()), "spine02 port 2 - leaf02 port 6");
  EXPECT_EQ(m.located->pairs_left_out, 1u);
  EXPECT_EQ(found.pairs_routed, m.pairs.size() - 1);
  EXPECT_TRUE(std::any_of(m.notes.begin(), m.notes.end(), [](const std::string& n) {
    return n == "1 missing pair left out of the locating on the fabric";
  })) << fmt::format("{}", fmt::join(m.notes, "|"));
  for (std::size_t i = 0; i < m.pairs.size(); ++i) {
    const auto* s = m.located->explaining(i);
    EXPECT_EQ(s != nullptr, m.pairs[i].state == sweep::pair_state::slow) << i;
  }
  // The verdict names the cable.
  auto v = sweep::judge(m);
  EXPECT_EQ(v.code, fabric::exit_code::test_failed);
  EXPECT_NE(v.reason.find("; 1 suspect link on the fabric, the first spine02 port 2 - leaf02 port 6"), std::string::npos)
      << v.reason;
}

TEST(sweep_report_fabric, hosts_found_by_their_ports_guid_whatever_their_names) {
  auto f = synthetic::fat_tree({.leaves = 2, .spines = 2, .hosts = 2});
  std::vector<std::string> lines;
  // Hosts named apart from their adapters' descriptions: their lines' port
  // GUIDs find them.
  std::vector<std::uint32_t> ca;
  for (std::uint32_t i = 0; i < f.nodes.size(); ++i)
    if (f.nodes[i].type == sn::node_type::ca) ca.push_back(i);
  for (std::size_t a = 0; a < ca.size(); ++a)
    for (std::size_t b = a + 1; b < ca.size(); ++b)
      for (auto [side, who] : {std::pair{"server", a}, std::pair{"client", b}})
        lines.push_back(pair_line(fmt::format("n{}", a), fmt::format("n{}", b), side, true, 20,
                                  {{"port_guid", sn::guid_text(f.nodes[ca[who]].ports.front().guid)}}));
  auto m = sweep::merge(lines, defaults);
  auto hints = sweep::endpoints_of(m);
  ASSERT_EQ(hints.size(), 4u);
  EXPECT_EQ(hints[0].port_guid, f.nodes[ca[0]].ports.front().guid);
  sweep::locate_pairs(m, f, nullptr);
  EXPECT_EQ(m.located->found.endpoints_found, 4u);
  EXPECT_EQ(m.located->found.pairs_routed, 6u);
  EXPECT_TRUE(m.located->found.suspects.empty());
  EXPECT_TRUE(m.located->suspect_of.empty());
  EXPECT_TRUE(sweep::judge(m).ok());
}

TEST(sweep_report_fabric, a_fabric_check_alone_fails_on_a_suspect_and_passes_without) {
  auto before = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 2});
  auto after = before;
  after.taken_at += 60;
  for (auto& p : after.nodes[synthetic::node_named(after, "leaf01")].ports)
    if (p.number == 3) p.counters->set(sn::counter::rcv_errors, 7);  // leaf01 to spine01
  auto m = sweep::merge({}, defaults);
  sweep::locate_pairs(m, before, &before);
  ASSERT_TRUE(m.fabric_check());
  EXPECT_TRUE(sweep::judge(m).ok());
  EXPECT_NE(sweep::format_matrix(m).find("a check of the fabric alone\nfabric: 16 links; counters compared between the two "
                                         "documents\nsuspect links: none\n"),
            std::string::npos)
      << sweep::format_matrix(m);
  m = sweep::merge({}, defaults);
  sweep::locate_pairs(m, before, &after);
  auto v = sweep::judge(m);
  EXPECT_EQ(v.code, fabric::exit_code::test_failed);
  EXPECT_EQ(v.reason, "1 suspect link on the fabric, the first spine01 port 1 - leaf01 port 3");
  EXPECT_NE(sweep::format_matrix(m).find("  1. spine01 port 1 - leaf01 port 3: counters rose: rcv_errors +7; width 4X of 4X; "
                                         "speed EDR of EDR; score 0."),
            std::string::npos)
      << sweep::format_matrix(m);
}

TEST(sweep_report_fabric, every_pair_passed_but_a_link_below_its_rate_fails_the_report) {
  auto f = synthetic::fat_tree({.leaves = 2, .spines = 2, .hosts = 2});
  for (auto& p : f.nodes[synthetic::node_named(f, "leaf02")].ports)
    if (p.number == 4) p.width = 1;  // leaf02 to spine02 at 1X of 4X
  auto m = sweep::merge(sweep_of(f, std::nullopt), defaults);
  sweep::locate_pairs(m, f, nullptr);
  auto v = sweep::judge(m);
  ASSERT_EQ(m.count(sweep::pair_state::slow), 0u) << v.reason;
  EXPECT_EQ(v.reason, "every pair passed, but 1 suspect link on the fabric, the first spine02 port 2 - leaf02 port 4");
}

TEST(sweep_render_fabric, every_rendering_carries_the_suspects_from_one_description) {
  auto before = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 4});
  auto after = before;
  sn::end uplink{synthetic::node_named(before, "leaf02"), 6};
  for (auto& p : after.nodes[uplink.node].ports)
    if (p.number == 6) p.counters->set(sn::counter::symbol_errors, 1000);
  auto lines = sweep_of(before, uplink);
  auto plain = sweep::merge(lines, defaults);
  auto m = sweep::merge(lines, defaults);
  sweep::locate_pairs(m, before, &after);
  sweep::options opt;
  opt.mode = sweep::mode::report;

  // JSON: null without --fabric; with it, each suspect by the fields.
  nlohmann::json none, j;
  sweep::to_json(none, opt, plain);
  EXPECT_TRUE(none["summary"]["suspects"].is_null());
  EXPECT_TRUE(none["summary"]["located"].is_null());
  sweep::to_json(j, opt, m);
  const auto& s = j["summary"]["suspects"].at(0);
  EXPECT_EQ(s["ends"][1], (nlohmann::json{{"node_guid", "0x0200000000000003"}, {"description", "leaf02"}, {"port", 6}}));
  EXPECT_EQ(s["counters"], (nlohmann::json{{"symbol_errors", 1000}}));
  EXPECT_EQ(s["pairs_bad"], s["pairs_crossing"]);
  for (const auto& f : sweep::suspect_fields()) EXPECT_TRUE(s.contains(std::string(f.key))) << f.key;
  EXPECT_EQ(j["summary"]["located"]["documents"], 2);
  EXPECT_EQ(j["summary"]["located"]["hosts_found"], 16);

  // Text: a section, the link and its reason.
  auto text = sweep::format_matrix(m);
  EXPECT_NE(text.find("suspect links, worst first: 1\n  1. spine02 port 2 - leaf02 port 6: "), std::string::npos) << text;
  EXPECT_EQ(sweep::format_matrix(plain).find("suspect"), std::string::npos);

  // CSV: a last column on the pairs' rows with --fabric only; a row a suspect.
  auto csv = sweep::csv_text(m);
  EXPECT_TRUE(csv.substr(0, csv.find("\r\n")).ends_with(",error,a_rail,b_rail,suspect_link"));
  EXPECT_NE(csv.find(",slow,ping,"), std::string::npos);
  EXPECT_NE(csv.find(",,,spine02 port 2 - leaf02 port 6\r\n"), std::string::npos) << "no rails, then the link";
  EXPECT_TRUE(sweep::csv_text(plain).substr(0, sweep::csv_text(plain).find("\r\n")).ends_with(",error,a_rail,b_rail"));
  auto rows = sweep::suspects_csv_text(m);
  EXPECT_EQ(rows.substr(0, rows.find("\r\n")),
            "rank,a_description,a_node_guid,a_port,b_description,b_node_guid,b_port,pairs_bad,pairs_crossing,counters,width,"
            "width_supported,speed,speed_supported,went_down,score,reason");
  EXPECT_NE(rows.find("\r\n1,spine02,0x0200000000000001,2,leaf02,0x0200000000000003,6,"), std::string::npos) << rows;

  // Gauges: a few series a suspect link, none a pair.
  auto prom = sweep::prometheus_text(m);
  EXPECT_NE(prom.find("fabric_sweep_suspect_links 1\n"), std::string::npos);
  EXPECT_NE(prom.find("fabric_sweep_suspect_link_bad_pairs{a=\"spine02\",a_guid=\"0x0200000000000001\",a_port=\"2\",b=\"leaf02\","
                      "b_guid=\"0x0200000000000003\",b_port=\"6\"} "),
            std::string::npos)
      << prom;
  EXPECT_NE(prom.find(",counter=\"symbol_errors\"} 1000\n"), std::string::npos);
  EXPECT_EQ(sweep::prometheus_text(plain).find("suspect"), std::string::npos);

  // The page: the section, the view by switch, and each bad pair's link.
  auto page = sweep::html_page(m);
  EXPECT_NE(page.find("<h2 id=\"suspects\">Suspect links: 1</h2>"), std::string::npos);
  EXPECT_NE(page.find("<tr><td>leaf02</td><td>0x0200000000000003</td><td>port 6 (#1, to spine02 port 2)</td></tr>"),
            std::string::npos);
  EXPECT_NE(page.find("suspect link #1: spine02 port 2 - leaf02 port 6"), std::string::npos);
  EXPECT_EQ(sweep::html_page(plain).find("suspect"), std::string::npos);
}

namespace {

/// A rail-optimized fabric: every host has two adapters, "hostNNNN mlx5_0"
/// on leaf01 or leaf02 (rail mlx5_0), "hostNNNN mlx5_1" on leaf03 or
/// leaf04 (rail mlx5_1); the synthetic fat tree's eight CAs, named so.
sn::fabric two_rails() {
  auto f = synthetic::fat_tree({.leaves = 4, .spines = 2, .hosts = 2});
  int k = 0;
  for (auto& n : f.nodes)
    if (n.type == sn::node_type::ca) {
      n.description = fmt::format("host{:04d} mlx5_{}", k % 4 + 1, k / 4);
      ++k;
    }
  return f;
}

/// Every pair of two_rails()' four hosts on each rail, as their client
/// lines: on `rail_name(r)`, each host meets each other on its adapter of
/// rail r; the pairs that cross `bad` slow.
std::vector<std::string> rails_sweep_of(const sn::fabric& f, std::optional<sn::end> bad,
                                        const std::function<std::string(int)>& host_name,
                                        const std::function<std::string(int)>& rail_name) {
  sn::index at(f);
  auto adapter = [&](int host, int rail) {
    return synthetic::node_named(f, fmt::format("host{:04d} mlx5_{}", host + 1, rail));
  };
  std::vector<std::string> lines;
  for (int rail = 0; rail < 2; ++rail)
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) {
        bool slow = bad && crosses(at, adapter(a, rail), adapter(b, rail), *bad);
        lines.push_back(pair_line(host_name(a), host_name(b), "client", true, slow ? 80 : 20 + a * 0.3 + b * 0.1,
                                  {{"server_rail", rail_name(rail)}, {"client_rail", rail_name(rail)}}));
      }
  return lines;
}

}  // namespace

TEST(sweep_report_fabric, on_rails_each_rails_adapter_is_found_and_the_faulty_rails_uplink_named) {
  auto f = two_rails();
  sn::end uplink{synthetic::node_named(f, "leaf03"), 4};  // rail mlx5_1's leaf03 to spine02
  auto host = [](int h) { return fmt::format("host{:04d}", h + 1); };
  auto rail = [](int r) { return fmt::format("mlx5_{}", r); };
  auto m = sweep::merge(rails_sweep_of(f, uplink, host, rail), defaults);
  ASSERT_TRUE(m.has_rails());
  ASSERT_GT(m.count(sweep::pair_state::slow), 0u);
  // Without the rails' word in the lines, each rail's adapter is the CA
  // "host rail".
  auto hints = sweep::endpoints_of(m);
  ASSERT_EQ(hints.size(), 8u);
  EXPECT_EQ(hints[1].host, m.hosts[0]);
  EXPECT_EQ(hints[1].device, "mlx5_1");
  sweep::locate_pairs(m, f, nullptr);
  const auto& found = m.located->found;
  EXPECT_EQ(found.endpoints_found, 8u);
  EXPECT_EQ(found.pairs_routed, 12u);
  ASSERT_FALSE(found.suspects.empty());
  EXPECT_EQ(sweep::locate::link_name(found.suspects.front()), "spine02 port 3 - leaf03 port 4");
  for (std::size_t i = 0; i < m.pairs.size(); ++i) {
    EXPECT_EQ(m.located->explaining(i) != nullptr, m.pairs[i].state == sweep::pair_state::slow) << i;
    if (m.pairs[i].state == sweep::pair_state::slow) {
      EXPECT_EQ(m.planes[m.pairs[i].plane].a_rail, "mlx5_1");
    }
  }
  EXPECT_NE(sweep::format_matrix(m).find("; 8 of 8 rail adapters found, 12 pairs located, 0 not"), std::string::npos)
      << sweep::format_matrix(m);
}

TEST(sweep_report_fabric, on_rails_the_ranks_word_on_each_rails_port_finds_it_whatever_the_names) {
  auto f = two_rails();
  auto host = [](int h) { return fmt::format("n{}", h + 1); };
  auto rail = [](int r) { return fmt::format("rail{}", r); };
  auto lines = rails_sweep_of(f, std::nullopt, host, rail);
  for (int h = 0; h < 4; ++h) {
    nlohmann::json rails = nlohmann::json::array();
    for (int r = 0; r < 2; ++r) {
      const auto& ca = f.nodes[synthetic::node_named(f, fmt::format("host{:04d} mlx5_{}", h + 1, r))];
      rails.push_back({{"name", rail(r)},
                       {"address", "10.0.0.1"},
                       {"trouble", nullptr},
                       {"adapter", {{"device", fmt::format("dev{}", r)}, {"port_guid", sn::guid_text(ca.ports.front().guid)}}}});
    }
    lines.push_back(event("started", {{"host", host(h)}, {"rails", rails}}).dump());
  }
  auto m = sweep::merge(lines, defaults);
  ASSERT_EQ(m.rail_ports.size(), 8u);
  sweep::locate_pairs(m, f, nullptr);
  EXPECT_EQ(m.located->found.endpoints_found, 8u);
  EXPECT_EQ(m.located->found.pairs_routed, 12u);
  EXPECT_TRUE(m.located->found.suspects.empty());
  EXPECT_TRUE(sweep::judge(m).ok()) << sweep::judge(m).reason;

  // --check intra: each host's rail 1 pings its rail 0, across the fabric.
  std::vector<std::string> intra(lines.end() - 4, lines.end());
  for (int h = 0; h < 4; ++h)
    intra.push_back(pair_line(host(h), host(h), "client", true, 20,
                              {{"check", "intra"}, {"server_rail", rail(0)}, {"client_rail", rail(1)}}));
  auto own = sweep::merge(intra, defaults);
  ASSERT_EQ(own.check, sweep::check::intra);
  sweep::locate_pairs(own, f, nullptr);
  EXPECT_EQ(own.located->found.endpoints_found, 8u);
  EXPECT_EQ(own.located->found.pairs_routed, 4u);
}

TEST(sweep_report_ports, a_list_of_rails_no_rank_would_send_is_read_only_so_far) {
  nlohmann::json rails = nlohmann::json::array();
  for (int r = 0; r < 1000; ++r) rails.push_back({{"name", fmt::format("r{}", r)}, {"adapter", {{"device", "d"}, {"lid", 1}}}});
  rails.push_back({{"name", 7}, {"adapter", nullptr}});
  auto m = sweep::merge({event("started", {{"host", "a"}, {"rails", rails}}).dump(),
                         pair_line("a", "b", "client", true, 10, {{"server_rail", "r0"}, {"client_rail", "r0"}})},
                        defaults);
  EXPECT_EQ(m.rail_ports.size(), 64u);
}
