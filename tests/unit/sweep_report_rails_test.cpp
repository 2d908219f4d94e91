// The report of a sweep with --rails: a matrix per rail (a plane of
// pairs), judged by the rails' common bar, so that a rail slower than its
// siblings is the finding; worst rails; --rail; the rail of each side in
// the JSON, the CSV and the gauges; and --check intra's pairs, each
// host's own rails.
#include "fabric-sweep/report/report.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

namespace {

using sweep::check;
using sweep::pair_state;
const sweep::verdict_options defaults{};

std::string host(int i) { return fmt::format("n{}", i); }

/// A client's line of pair (a, b) met from rail `client_rail` of b to
/// `server_rail` of a; no rails when both are empty.
std::string pair_line(check c, const std::string& server, const std::string& client, const std::string& server_rail,
                      const std::string& client_rail, double figure, bool ok = true) {
  auto rail = [](const std::string& r) { return r.empty() ? nlohmann::json(nullptr) : nlohmann::json(r); };
  nlohmann::json pair{{"kind", "pair"},       {"ok", ok},           {"error", ok ? nlohmann::json(nullptr) : "rail down"},
                      {"round", 1},           {"sweep", 1},         {"retest", false},
                      {"server", server},     {"client", client},   {"side", "client"},
                      {"check", sweep::check_name(c)}, {"server_rail", rail(server_rail)},
                      {"client_rail", rail(client_rail)}};
  if (ok && sweep::measures_bandwidth(c)) {
    nlohmann::json d{{"bytes", 1000}, {"elapsed_us", 1e6}, {"gbps", figure}};
    pair["bandwidth"] = {{"server_to_client", d}, {"client_to_server", d}};
  } else if (ok) {
    pair["latency"] = {{"count", 100}, {"p50_us", figure}, {"p99_us", figure * 1.2}};
  }
  return nlohmann::json{{"tool", "fabric-sweep"}, {"event", "result"}, {"result", pair}}.dump();
}

/// Every pair of n hosts on each of `rails`, rail i with rail i, each
/// figure `figure(a, b, rail)` (1% apart pair by pair, as noise would be).
std::vector<std::string> sweep_of(check c, int n, const std::vector<std::string>& rails,
                                  const std::function<double(int, int, const std::string&)>& figure) {
  std::vector<std::string> out;
  int k = 0;
  for (const auto& r : rails)
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) out.push_back(pair_line(c, host(a), host(b), r, r, figure(a, b, r) * (1 + 0.01 * (++k % 3))));
  return out;
}

std::vector<std::string> bad_pairs(const sweep::matrix& m) {
  std::vector<std::string> out;
  for (const auto& p : m.pairs)
    if (sweep::is_bad(p.state))
      out.push_back(fmt::format("{}-{} {}", m.hosts[p.a], m.hosts[p.b], m.planes[p.plane].name()));
  return out;
}

TEST(sweep_report_rails, a_plane_per_rail_and_the_degraded_rail_is_the_finding) {
  // Two rails of six hosts; rail1 between n1 and n4 at 40%: slow there
  // only, though rail1's own pairs alone are too few to say much.
  auto m = sweep::merge(sweep_of(check::bw, 6, {"rxe0", "rxe1"},
                                 [](int a, int b, const std::string& r) {
                                   return r == "rxe1" && a == 1 && b == 4 ? 40.0 : 100.0;
                                 }),
                        defaults);
  ASSERT_EQ(m.planes.size(), 2u);
  EXPECT_EQ(m.planes[0].name(), "rail rxe0");
  EXPECT_EQ(m.planes[1].name(), "rail rxe1");
  EXPECT_EQ(m.pairs.size(), 2u * 15);
  EXPECT_EQ(bad_pairs(m), std::vector<std::string>{"n1-n4 rail rxe1"}) << sweep::format_matrix(m);
  ASSERT_EQ(m.worst_rails.size(), 1u);
  EXPECT_EQ(m.worst_rails[0], (std::pair<std::string, int>{"rxe1", 1}));
  // Each direction's gauge names its sender and receiver and their rails.
  auto gauges = sweep::prometheus_text(m, true);
  EXPECT_NE(gauges.find("{check=\"bw\",from=\"n4\",to=\"n1\",from_rail=\"rxe1\",to_rail=\"rxe1\"} 5"), std::string::npos)
      << gauges;
  auto text = sweep::format_matrix(m);
  EXPECT_NE(text.find("rail rxe0:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rail rxe1:\n"), std::string::npos) << text;
  EXPECT_NE(text.find("slow: n1 <-> n4 on rail rxe1: 40"), std::string::npos) << text;
  EXPECT_NE(text.find("worst rails: rxe1 (1)"), std::string::npos) << text;
}

TEST(sweep_report_rails, a_rail_slower_than_its_siblings_is_judged_by_their_bar) {
  // Four rails, one of them at 60% on every pair: judged against its
  // siblings' common bar, all its pairs are slow, the others pass.
  auto m = sweep::merge(sweep_of(check::bw, 5, {"r0", "r1", "r2", "r3"},
                                 [](int, int, const std::string& r) { return r == "r2" ? 60.0 : 100.0; }),
                        defaults);
  EXPECT_EQ(m.count(pair_state::slow), 10u) << sweep::format_matrix(m);
  for (const auto& p : m.pairs) EXPECT_EQ(p.state == pair_state::slow, m.planes[p.plane].a_rail == "r2");
  ASSERT_FALSE(m.worst_rails.empty());
  EXPECT_EQ(m.worst_rails[0].first, "r2");
}

TEST(sweep_report_rails, a_rail_down_on_one_host_fails_its_pairs_there_and_nothing_else) {
  auto lines = sweep_of(check::ping, 4, {"rxe0", "rxe1"}, [](int, int, const std::string&) { return 20.0; });
  // n2's rxe1 down: its pairs on rxe1 fail with the reason the rank gave.
  for (auto& l : lines) {
    auto j = nlohmann::json::parse(l);
    auto& r = j["result"];
    if (r["server_rail"] == "rxe1" && (r["server"] == "n2" || r["client"] == "n2"))
      l = pair_line(check::ping, r["server"], r["client"], "rxe1", "rxe1", 0, false);
  }
  auto m = sweep::merge(lines, defaults);
  EXPECT_EQ(m.count(pair_state::failed), 3u);
  EXPECT_EQ(m.count(pair_state::ok), 9u);
  ASSERT_EQ(m.worst.size(), 1u);
  EXPECT_EQ(m.worst[0].first, "n2");
  EXPECT_EQ(m.worst_rails[0].first, "rxe1");
}

TEST(sweep_report_rails, cross_rails_make_a_plane_per_ordered_pair_of_rails) {
  // --cross-rails: rail x of the server with rail y of the client, every x
  // and y; a plane is (a's rail, b's rail) in the host order.
  std::vector<std::string> lines;
  for (std::string x : {"r0", "r1"})
    for (std::string y : {"r0", "r1"})
      for (int a = 0; a < 3; ++a)
        for (int b = a + 1; b < 3; ++b)
          // Seen from the client b's side: the server a on x, b on y; r1 of
          // n2 slow with r0 of n0.
          lines.push_back(pair_line(check::ping, host(a), host(b), x, y, a == 0 && b == 2 && x == "r0" && y == "r1" ? 90 : 20));
  auto m = sweep::merge(lines, defaults);
  std::vector<std::string> names;
  for (const auto& p : m.planes) names.push_back(p.name());
  EXPECT_EQ(names, (std::vector<std::string>{"rail r0", "rail r1", "rails r0 to r1", "rails r1 to r0"}));
  EXPECT_EQ(bad_pairs(m), std::vector<std::string>{"n0-n2 rails r0 to r1"}) << sweep::format_matrix(m);
}

TEST(sweep_report_rails, keep_rail_reports_one_rail_judged_by_all) {
  auto m = sweep::merge(sweep_of(check::bw, 6, {"rxe0", "rxe1"},
                                 [](int a, int b, const std::string& r) {
                                   return r == "rxe1" && a == 1 && b == 4 ? 40.0 : 100.0;
                                 }),
                        defaults);
  auto bar = m.bar.value;
  auto one = m;
  sweep::keep_rail(one, "rxe0");
  EXPECT_EQ(one.planes.size(), 1u);
  EXPECT_EQ(one.pairs.size(), 15u);
  EXPECT_EQ(one.count(pair_state::slow), 0u);
  EXPECT_EQ(one.bar.value, bar);
  EXPECT_TRUE(sweep::judge(one).ok());
  sweep::keep_rail(m, "rxe1");
  EXPECT_EQ(m.count(pair_state::slow), 1u);
  EXPECT_EQ(m.pair_of(1, 4).state, pair_state::slow);
  try {
    sweep::keep_rail(m, "mlx5_9");
    FAIL() << "an unknown rail is a usage error";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("the lines' rails are rxe1"), std::string::npos) << e.what();
  }
}

TEST(sweep_report_rails, each_side_has_its_rail_in_the_json_csv_and_gauges) {
  auto m = sweep::merge(sweep_of(check::ping, 3, {"rxe0", "rxe1"},
                                 [](int a, int b, const std::string& r) { return r == "rxe1" && a == 0 && b == 2 ? 90.0 : 20.0; }),
                        defaults);
  std::vector<nlohmann::json> results;
  sweep::each_result(m, [&](nlohmann::json j) { results.push_back(std::move(j)); });
  ASSERT_EQ(results.size(), 6u);
  EXPECT_EQ(results[0]["a_rail"], "rxe0");
  EXPECT_EQ(results[5]["b_rail"], "rxe1");
  auto csv = sweep::csv_text(m);
  EXPECT_NE(csv.find(",error,a_rail,b_rail\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("n0,n2,slow,ping,1,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",rxe1,rxe1\r\n"), std::string::npos) << csv;
  auto gauges = sweep::prometheus_text(m);
  EXPECT_NE(gauges.find("fabric_sweep_host_bad_pairs{host=\"n2\",rail=\"rxe1\"} 1"), std::string::npos) << gauges;
  EXPECT_NE(gauges.find("fabric_sweep_host_bad_pairs{host=\"n2\",rail=\"rxe0\"} 0"), std::string::npos) << gauges;
  EXPECT_NE(gauges.find("fabric_sweep_pair_bad{a=\"n0\",b=\"n2\",a_rail=\"rxe1\",b_rail=\"rxe1\",state=\"slow\"} 1"),
            std::string::npos)
      << gauges;
}

TEST(sweep_report_rails, without_rails_nothing_changes) {
  auto m = sweep::merge(sweep_of(check::ping, 3, {""}, [](int, int, const std::string&) { return 20.0; }), defaults);
  EXPECT_FALSE(m.has_rails());
  EXPECT_EQ(m.planes.size(), 1u);
  auto text = sweep::format_matrix(m);
  EXPECT_EQ(text.find("rail"), std::string::npos) << text;
  auto csv = sweep::csv_text(m);
  EXPECT_NE(csv.find("\r\nn0,n1,ok,ping,1,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",,\r\nn0,n2,"), std::string::npos) << "no rail on either side: two empty fields\n" << csv;
  auto gauges = sweep::prometheus_text(m);
  EXPECT_NE(gauges.find("fabric_sweep_host_bad_pairs{host=\"n0\"} 0"), std::string::npos) << gauges;
}

TEST(sweep_report_rails, a_line_with_one_side_on_a_rail_is_malformed) {
  auto half = pair_line(check::ping, "n0", "n1", "rxe0", "", 20);
  auto m = sweep::merge({half, pair_line(check::ping, "n0", "n2", "", "", 20)}, defaults);
  EXPECT_FALSE(m.has_rails());
  EXPECT_TRUE(std::any_of(m.notes.begin(), m.notes.end(),
                          [](const std::string& n) { return n.find("1 pair line of a wrong shape") != std::string::npos; }));
}

TEST(sweep_report_rails, intra_pairs_are_each_hosts_own_rails) {
  // --check intra: from each rail of a host to each other; n1's rail 2
  // slow to its siblings. The matrix's ends are host/rail.
  std::vector<std::string> lines;
  for (int h = 0; h < 3; ++h)
    for (int x = 0; x < 3; ++x)
      for (int y = x + 1; y < 3; ++y)
        lines.push_back(pair_line(check::intra, host(h), host(h), fmt::format("r{}", x), fmt::format("r{}", y),
                                  h == 1 && y == 2 ? 80 : 10 + 0.1 * x));
  auto m = sweep::merge(lines, defaults);
  EXPECT_EQ(m.check, check::intra);
  EXPECT_EQ(m.hosts, (std::vector<std::string>{"n0/r0", "n0/r1", "n0/r2", "n1/r0", "n1/r1", "n1/r2", "n2/r0", "n2/r1",
                                               "n2/r2"}));
  EXPECT_EQ(m.planned(), 9u) << "three rail pairs of each host, no pair across hosts";
  EXPECT_EQ(bad_pairs(m), (std::vector<std::string>{"n1/r0-n1/r2 ", "n1/r1-n1/r2 "})) << sweep::format_matrix(m);
  ASSERT_FALSE(m.worst.empty());
  EXPECT_EQ(m.worst[0].first, "n1/r2");
  EXPECT_NE(sweep::rerun_text(m).find("--check intra again"), std::string::npos);
}

}  // namespace
