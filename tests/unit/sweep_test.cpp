// fabric-sweep's logic: the round schedule, where a process stands, the
// address rule, and the merged report.
#include "fabric-sweep/health/health.hpp"
#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/meetings.hpp"
#include "fabric-sweep/rank/place.hpp"
#include "fabric-sweep/report/report.hpp"
#include "fabric-sweep/rank/rounds.hpp"

#include "fabric/base/error.hpp"
#include "fabric/base/meet.hpp"

#include "parse_options.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

namespace {

/// The verdicts of the tests written for a factor of 3.
const sweep::verdict_options factor3 = [] {
  sweep::verdict_options o;
  o.outlier_factor = 3.0;
  return o;
}();

TEST(sweep_schedule, every_pair_meets_once_and_nobody_twice_a_round) {
  for (int n = 2; n <= 17; ++n) {
    auto rs = sweep::rounds(n);
    EXPECT_EQ(static_cast<int>(rs.size()), n % 2 == 0 ? n - 1 : n) << n;
    std::set<std::pair<int, int>> met;
    for (const auto& round : rs) {
      std::set<int> busy;
      EXPECT_EQ(static_cast<int>(round.size()), n / 2) << n;
      for (const auto& p : round) {
        EXPECT_LT(p.server, p.client);
        EXPECT_TRUE(busy.insert(p.server).second && busy.insert(p.client).second) << "a host twice in a round";
        EXPECT_TRUE(met.insert({p.server, p.client}).second) << "a pair met twice";
      }
    }
    EXPECT_EQ(static_cast<int>(met.size()), n * (n - 1) / 2) << n;
  }
  EXPECT_TRUE(sweep::rounds(1).empty());
}

TEST(sweep_schedule, ports_differ_across_rounds_and_pairs) {
  int n = 6;
  auto rs = sweep::rounds(n);
  std::set<int> ports;
  for (int r = 0; r < static_cast<int>(rs.size()); ++r)
    for (const auto& p : rs[static_cast<std::size_t>(r)]) EXPECT_TRUE(ports.insert(sweep::pair_port(18515, n, r, p)).second);
}

TEST(sweep_place, from_slurm) {
  sweep::run_options o;
  auto p = sweep::find_place(o, {{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_NODELIST", "node[01-04]"}}, "x");
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.hosts, (std::vector<std::string>{"node01", "node02", "node03", "node04"}));
  EXPECT_EQ(p.source, "slurm");
  // Two tasks on one node would pair a host with itself.
  EXPECT_THROW(sweep::find_place(o, {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_JOB_NODELIST", "node[01-04]"}}, "x"),
               fabric::error);
  EXPECT_THROW(sweep::find_place(o, {}, "x"), fabric::error);
}

TEST(sweep_place, from_the_host_name_in_hosts) {
  sweep::run_options o;
  o.hosts = "node[01-03]";
  EXPECT_EQ(sweep::find_place(o, {}, "node03").rank, 2);
  EXPECT_EQ(sweep::find_place(o, {}, "node02.cluster.example").rank, 1);
  EXPECT_THROW(sweep::find_place(o, {}, "login"), fabric::error);
  o.rank = 0;
  EXPECT_EQ(sweep::find_place(o, {}, "login").rank, 0);
  o.rank = 3;
  EXPECT_THROW(sweep::find_place(o, {}, "login"), fabric::error);
}

TEST(sweep_address, template_and_file) {
  sweep::run_options o;
  o.address = "{short}-ib";
  EXPECT_EQ(sweep::addresses(o, {"a.example", "b"}), (std::vector<std::string>{"a-ib", "b-ib"}));
  auto path = testing::TempDir() + "/sweep-addresses";
  std::ofstream(path) << "# host address\na 10.0.0.1\nb.example 10.0.0.2\n";
  o.address_file = path;
  EXPECT_EQ(sweep::addresses(o, {"a", "b.example"}), (std::vector<std::string>{"10.0.0.1", "10.0.0.2"}));
  EXPECT_THROW(sweep::addresses(o, {"a", "c"}), fabric::error);
}

std::string pair_line(const std::string& prefix, const std::string& server, const std::string& client, bool ok,
                      double p50) {
  nlohmann::json pair{{"kind", "pair"}, {"ok", ok}, {"error", ok ? nlohmann::json(nullptr) : nlohmann::json("timed out")},
                      {"round", 1}, {"server", server}, {"client", client}, {"side", "client"}};
  if (ok) pair["latency"] = {{"count", 10}, {"p50_us", p50}, {"p99_us", p50 * 1.2}};
  nlohmann::json line{{"schema", "fabric-toolkit/fabric-sweep/2"}, {"tool", "fabric-sweep"}, {"event", "result"}, {"result", pair}};
  return prefix + line.dump();
}

TEST(sweep_report, merges_prefixed_lines_names_the_slow_and_the_missing) {
  nlohmann::json hosts{{"tool", "fabric-sweep"}, {"event", "started"},
                       {"started", {{"hosts", {"n1", "n2", "n3", "n4", "n5"}}}}};
  std::vector<std::string> lines{
      "0: " + hosts.dump(),                          // srun -l
      pair_line("n2: ", "n1", "n2", true, 20),       // clush / pdsh
      pair_line("", "n1", "n3", true, 21),
      pair_line("", "n2", "n3", true, 19),
      pair_line("", "n1", "n4", true, 22),
      pair_line("", "n2", "n4", true, 20),
      pair_line("", "n3", "n4", true, 200),          // the delayed link
      pair_line("", "n1", "n5", false, 0),           // n5 died
      pair_line("", "n2", "n5", false, 0),
      "garbage that is not JSON",
  };
  auto m = sweep::merge(lines, factor3);
  ASSERT_EQ(m.hosts.size(), 5u);
  EXPECT_EQ(m.pairs.size(), 10u);
  EXPECT_EQ(m.count(sweep::pair_state::slow), 1u);
  EXPECT_EQ(m.count(sweep::pair_state::failed), 2u);
  EXPECT_EQ(m.count(sweep::pair_state::missing), 2u);  // n3-n5, n4-n5
  EXPECT_EQ(m.worst.front().first, "n5");
  EXPECT_EQ(sweep::judge(m).code, fabric::exit_code::test_failed);
  auto table = sweep::format_matrix(m);
  EXPECT_NE(table.find("200.0!"), std::string::npos) << table;
  EXPECT_NE(table.find("FAIL"), std::string::npos);
  auto html = sweep::html_page(m);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg")) << "no fetches";
}

TEST(sweep_report, all_ok_passes_and_host_names_are_escaped) {
  std::vector<std::string> lines{pair_line("", "a<b>", "c", true, 10)};
  auto m = sweep::merge(lines, factor3);
  EXPECT_TRUE(sweep::judge(m).ok());
  EXPECT_EQ(sweep::html_page(m).find("<b>"), std::string::npos);
  EXPECT_FALSE(sweep::judge(sweep::merge({}, factor3)).ok());
}

}  // namespace

namespace {

TEST(sweep_report, long_lines_split_by_srun_are_joined_again) {
  auto line = pair_line("", "n1", "n2", true, 20);
  auto cut = line.size() / 3;
  std::vector<std::string> lines{"0: " + line.substr(0, cut), "1: " + pair_line("", "n1", "n3", true, 21),
                                 "0: " + line.substr(cut, cut), "0: " + line.substr(2 * cut),
                                 "2: {\"never\": \"ends", "2: " + pair_line("", "n2", "n3", true, 22)};
  auto m = sweep::merge(lines, factor3);
  EXPECT_EQ(m.count(sweep::pair_state::ok), 3u);
  EXPECT_EQ(m.notes.size(), 1u) << "the piece that never ended";
}

}  // namespace

namespace {

TEST(sweep_schedule, ports_of_a_big_fleet_stay_in_range_and_apart) {
  for (int n : {4, 300, 2000}) {
    auto cycle = sweep::port_cycle(18515, n);
    EXPECT_GE(cycle, 6) << n;
    std::set<int> near;  // the ports of rounds closer than a cycle differ
    for (int r = 0; r < std::min(n - 1, cycle); ++r)
      for (int slot = 0; slot < n / 2; ++slot) {
        int port = sweep::pair_port(18515, n, r, {0, 1, slot});
        EXPECT_GE(port, 18515);
        EXPECT_LE(port, 65535);
        EXPECT_TRUE(near.insert(port).second) << n << " round " << r;
      }
  }
  // So many hosts that not even a few rounds fit above the port.
  EXPECT_LT(sweep::port_cycle(65000, 2000), 6);
}

TEST(sweep_schedule, a_pairs_key_names_its_step_and_ranks_and_fits_beside_a_bandwidth_request) {
  auto key = sweep::pair_key(12, {3, 70000, 0});
  ASSERT_LE(key.size(), fabric::max_key_bytes);
  auto byte = [&](std::size_t i) { return std::to_integer<int>(key[i]); };
  EXPECT_EQ(std::string({char(byte(0)), char(byte(1)), char(byte(2)), char(byte(3))}), "FSWP");
  EXPECT_EQ(byte(7), 12);
  EXPECT_EQ((byte(13) << 16) | (byte(14) << 8) | byte(15), 70000);
  // Another step, another pair of the step, the pair's two sides swapped: another key.
  std::set<std::vector<std::byte>> keys{key, sweep::pair_key(13, {3, 70000, 0}), sweep::pair_key(12, {3, 4, 0}),
                                        sweep::pair_key(12, {70000, 3, 0})};
  EXPECT_EQ(keys.size(), 4u);
}

/// A latency check's outliers by the factor, and the fleet's spread.
std::vector<sweep::rank_pair> latency_outliers(const std::vector<sweep::measurement>& all, double factor, sweep::spread& fleet) {
  sweep::verdict_options o;
  o.outlier_factor = factor;
  sweep::fleet_bar bar;
  auto out = sweep::outliers(sweep::check::ping, all, o, bar);
  fleet = bar.group;
  return out;
}

TEST(sweep_outliers, median_and_mad_name_only_the_far_pair) {
  std::vector<sweep::measurement> all{{{0, 1}, 20}, {{0, 2}, 21}, {{1, 2}, 19}, {{0, 3}, 22}, {{1, 3}, 20}, {{2, 3}, 200}};
  sweep::spread fleet;
  EXPECT_EQ(latency_outliers(all, 3.0, fleet), (std::vector<sweep::rank_pair>{{2, 3}}));
  EXPECT_DOUBLE_EQ(fleet.median, 20) << "the healthy pairs' median: the far one is a group of its own";
  EXPECT_EQ(fleet.samples, 5u);
  // Noise is not an outlier: a wide spread keeps a pair at 3x the median in.
  std::vector<sweep::measurement> noisy{{{0, 1}, 10}, {{0, 2}, 40}, {{1, 2}, 20}, {{0, 3}, 60}};
  EXPECT_TRUE(latency_outliers(noisy, 2.0, fleet).empty());
  // Two pairs are no fleet.
  EXPECT_TRUE(latency_outliers({{{0, 1}, 10}, {{0, 2}, 1000}}, 3.0, fleet).empty());
}

TEST(sweep_outliers, a_host_slow_with_every_peer_of_a_small_fleet_is_found) {
  // Four hosts, rank 3 slow to each peer: its pairs are half the fleet's,
  // and a median of every pair sat between the healthy and the slow.
  std::vector<sweep::measurement> four{{{0, 1}, 3000}, {{0, 2}, 3400}, {{1, 2}, 5300},
                                       {{0, 3}, 105000}, {{1, 3}, 110000}, {{2, 3}, 114000}};
  sweep::spread fleet;
  EXPECT_EQ(latency_outliers(four, 2.5, fleet), (std::vector<sweep::rank_pair>{{0, 3}, {1, 3}, {2, 3}}));
  EXPECT_DOUBLE_EQ(fleet.median, 3400) << "the healthy hosts' pairs make the bar";
  EXPECT_EQ(fleet.samples, 3u);
  // Three hosts: two of three pairs are the slow host's.
  std::vector<sweep::measurement> three{{{0, 1}, 20}, {{0, 2}, 400}, {{1, 2}, 410}};
  EXPECT_EQ(latency_outliers(three, 2.5, fleet), (std::vector<sweep::rank_pair>{{0, 2}, {1, 2}}));
  // A slow link alone, between healthy hosts, is judged as before.
  std::vector<sweep::measurement> link{{{0, 1}, 20}, {{0, 2}, 21}, {{1, 2}, 19}, {{0, 3}, 22}, {{1, 3}, 20}, {{2, 3}, 60}};
  EXPECT_EQ(latency_outliers(link, 2.5, fleet), (std::vector<sweep::rank_pair>{{2, 3}}));
  // Every host alike, however they spread, is no outlier.
  std::vector<sweep::measurement> even{{{0, 1}, 20}, {{0, 2}, 40}, {{1, 2}, 30}, {{0, 3}, 25}, {{1, 3}, 35}, {{2, 3}, 45}};
  EXPECT_TRUE(latency_outliers(even, 2.5, fleet).empty());
}

TEST(sweep_outliers, retest_rounds_keep_every_host_to_one_peer) {
  auto rs = sweep::pack_rounds({{2, 3}, {0, 3}, {0, 1}, {2, 3}, {1, 2}});
  std::set<sweep::rank_pair> met;
  for (const auto& round : rs) {
    std::set<int> busy;
    for (std::size_t i = 0; i < round.size(); ++i) {
      EXPECT_EQ(round[i].slot, static_cast<int>(i));
      EXPECT_TRUE(busy.insert(round[i].server).second && busy.insert(round[i].client).second);
      EXPECT_TRUE(met.insert({round[i].server, round[i].client}).second) << "a pair twice";
    }
  }
  EXPECT_EQ(met.size(), 4u);
  EXPECT_EQ(rs.size(), 2u);
  EXPECT_TRUE(sweep::pack_rounds({}).empty());
}

TEST(sweep_outliers, the_agreement_lines_read_back_and_lies_are_refused) {
  auto line = sweep::rank_line(7, {3, {{{0, 3}, 20.5}, {{2, 3}, 200}}, {}});
  auto got = sweep::read_rank_line(line.substr(0, line.size() - 1), 4, 7);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->rank, 3);
  EXPECT_EQ(got->figures.size(), 2u);
  EXPECT_EQ(got->trouble, "");
  EXPECT_FALSE(sweep::read_rank_line(line, 3, 7)) << "rank 3 of 3 hosts";
  EXPECT_FALSE(sweep::read_rank_line(line, 4, 8)) << "a rank of an earlier sweep";
  for (const char* lie : {"", "{", "[]", "\xff\xfe", R"({"rank":1,"sweep":0})", R"({"rank":-1,"sweep":0,"figures":[]})",
                          R"({"rank":1,"sweep":0,"figures":[[0,2,5]]})",  // another client's pair
                          R"({"rank":1,"sweep":0,"figures":[[1,1,5]]})", R"({"rank":1,"sweep":0,"figures":[[0,1,-5]]})",
                          R"({"rank":1,"sweep":0,"figures":[[0,1,"5"]]})", R"({"rank":1.5,"sweep":0,"figures":[]})",
                          R"({"rank":1,"sweep":0,"figures":[[0,1,1e400]]})", R"({"rank":1,"figures":[]})"})
    EXPECT_FALSE(sweep::read_rank_line(lie, 4, 0)) << lie;

  sweep::agreement a;
  a.retest = {{2, 3}};
  a.fleet = {20.5, 1, 6};
  auto answer = sweep::read_agreement(sweep::agreement_line(a), 4);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->retest, a.retest);
  EXPECT_DOUBLE_EQ(answer->fleet.median, 20.5);
  for (const char* lie : {R"({"retest":[[3,2]]})", R"({"retest":[[0,9]]})", R"({"retest":"all"})", R"({"retest":[[0,1,2]]})",
                          R"({"retest":[[0,1],[0,1],[0,1],[0,1],[0,1],[0,1],[0,1]]})"})
    EXPECT_FALSE(sweep::read_agreement(lie, 4)) << lie;
}

std::string meeting_line(const std::string& server, const std::string& client, int round, bool retest, bool ok, double p50) {
  nlohmann::json pair{{"kind", "pair"}, {"ok", ok}, {"error", ok ? nlohmann::json(nullptr) : nlohmann::json("timed out")},
                      {"round", round}, {"retest", retest}, {"server", server}, {"client", client}, {"side", "client"},
                      {"elapsed_us", 1000.0 * round}};
  if (ok) pair["latency"] = {{"count", 10}, {"p50_us", p50}, {"p99_us", p50 * 1.2}};
  return nlohmann::json{{"tool", "fabric-sweep"}, {"event", "result"}, {"result", pair}}.dump();
}

TEST(sweep_report, a_retest_that_passes_clears_the_pair_and_one_still_slow_stays_slow) {
  std::vector<std::string> lines{
      meeting_line("n1", "n2", 1, false, true, 20), meeting_line("n3", "n4", 1, false, true, 200),
      meeting_line("n1", "n3", 2, false, true, 21), meeting_line("n2", "n4", 2, false, true, 150),
      meeting_line("n1", "n4", 3, false, true, 19), meeting_line("n2", "n3", 3, false, true, 20),
      meeting_line("n3", "n4", 4, true, true, 190),  // the delayed link again
      meeting_line("n2", "n4", 4, true, true, 22),   // a passing hiccup
  };
  auto m = sweep::merge(lines, factor3);
  ASSERT_EQ(m.pairs.size(), 6u);
  auto pair = [&](const std::string& a, const std::string& b) {
    return *std::find_if(m.pairs.begin(), m.pairs.end(), [&](const auto& p) { return m.hosts[p.a] == a && m.hosts[p.b] == b; });
  };
  EXPECT_EQ(pair("n3", "n4").state, sweep::pair_state::slow);
  EXPECT_EQ(pair("n3", "n4").retests, 1);
  EXPECT_DOUBLE_EQ(*pair("n3", "n4").first_p50_us, 200);
  EXPECT_EQ(pair("n2", "n4").state, sweep::pair_state::ok);
  EXPECT_DOUBLE_EQ(pair("n2", "n4").latency()->p50, 22);
  EXPECT_EQ(pair("n1", "n2").retests, 0);
  EXPECT_FALSE(pair("n1", "n2").first_p50_us);
  EXPECT_EQ(m.rounds, 4) << "the re-test round is a round";
  auto table = sweep::format_matrix(m);
  EXPECT_NE(table.find("\nslow: n3 <-> n4: p50 200.0 us, re-tested 190.0 us\n"), std::string::npos) << table;
  EXPECT_EQ(table.find("re-tested: n3 <-> n4"), std::string::npos) << "named once, with the slow pairs\n" << table;
  EXPECT_NE(table.find("re-tested: n2 <-> n4: p50 150.0 us, then 22.0 us (passed)"), std::string::npos) << table;

  // Failing every re-test fails the pair.
  lines.push_back(meeting_line("n3", "n4", 4, true, false, 0));
  lines[6] = meeting_line("n3", "n4", 5, true, false, 0);
  auto worse = sweep::merge(lines, factor3);
  auto p = *std::find_if(worse.pairs.begin(), worse.pairs.end(),
                         [&](const auto& x) { return worse.hosts[x.a] == "n3" && worse.hosts[x.b] == "n4"; });
  EXPECT_EQ(p.state, sweep::pair_state::failed);
  EXPECT_EQ(p.retests, 2);
  EXPECT_EQ(worse.error_of(p).rfind("every re-test failed", 0), 0u) << worse.error_of(p);
}

}  // namespace

namespace {

/// One sample line of the text format: name{label="value",...} number,
/// the values' quotes and backslashes escaped.
bool sample_is_well_formed(std::string_view line) {
  auto name_char = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; };
  std::size_t i = 0;
  while (i < line.size() && name_char(line[i])) ++i;
  if (i == 0) return false;
  if (i < line.size() && line[i] == '{') {
    ++i;
    for (;;) {
      auto start = i;
      while (i < line.size() && name_char(line[i])) ++i;
      if (i == start || line.substr(i, 2) != "=\"") return false;
      for (i += 2; i < line.size() && line[i] != '"'; ++i)
        if (line[i] == '\\' && ++i == line.size()) return false;
      if (i == line.size()) return false;
      ++i;
      if (i < line.size() && line[i] == '}') break;
      if (i == line.size() || line[i++] != ',') return false;
      if (i < line.size() && line[i] == '}') break;  // a trailing comma
    }
    ++i;
  }
  if (i >= line.size() || line[i] != ' ' || i + 1 == line.size()) return false;
  return line.substr(i + 1).find_first_not_of("-+0123456789.e") == std::string_view::npos;
}

/// Every line of the text format: a comment, or a sample.
bool exposition_is_well_formed(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.starts_with("# HELP ") && !line.starts_with("# TYPE ") && !sample_is_well_formed(line)) return false;
  return true;
}

TEST(sweep_prometheus, the_well_formed_check_refuses_what_is_not_a_sample) {
  EXPECT_TRUE(sample_is_well_formed(R"(a_b{x="1",y="q\"\\"} 2e-05)"));
  EXPECT_TRUE(sample_is_well_formed("fabric_health_ok 1"));
  for (const char* bad : {"", "A 1", "a", "a ", "a{x=\"1\" 1", "a{x=1} 1", R"(a{x="\"} 1)", R"(a{x="1"y="2"} 1)", "a 1 2", "a{} 1"})
    EXPECT_FALSE(sample_is_well_formed(bad)) << bad;
}

TEST(sweep_prometheus, the_report_as_gauges_with_hostile_host_names_escaped) {
  std::vector<std::string> lines{pair_line("", "n1", "n\"2\\", true, 20), pair_line("", "n1", "n3\u00e9\n", true, 21),
                                 pair_line("", "n\"2\\", "n3\u00e9\n", false, 0)};
  auto text = sweep::prometheus_text(sweep::merge(lines, factor3), true);
  EXPECT_TRUE(exposition_is_well_formed(text)) << text;
  EXPECT_NE(text.find(R"(fabric_sweep_pair_p50_seconds{check="ping",a="n1",b="n\"2\\"} 2e-05)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(fabric_sweep_pairs{state="failed"} 1)"), std::string::npos);
  // A line feed is the text \x0a, as in every rendering (its backslash then escaped).
  EXPECT_NE(text.find("fabric_sweep_pair_bad{a=\"n\\\"2\\\\\",b=\"n3\u00e9\\\\x0a\",state=\"failed\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(fabric_sweep_host_bad_pairs{host="n1"} 0)"), std::string::npos);
}

TEST(sweep_prometheus, a_host_without_an_active_port) {
  sweep::health_report rep;
  fabric::port_info down;
  down.device = "rxe0";
  down.port = 1;
  down.state = IBV_PORT_DOWN;
  down.link_layer = IBV_LINK_LAYER_ETHERNET;
  down.active_mtu = 1024;
  rep.ports.push_back({down, "veth0", "10.0.0.1"});
  auto text = sweep::prometheus_text(sweep::options{}, rep, {fabric::exit_code::no_device, "no Active port"});
  EXPECT_TRUE(exposition_is_well_formed(text)) << text;
  EXPECT_NE(text.find("fabric_health_ok 0\n"), std::string::npos);
  EXPECT_NE(text.find(R"(fabric_health_port_active{device="rxe0",port="1",link_layer="Ethernet"} 0)"), std::string::npos);
  EXPECT_NE(text.find(R"(fabric_health_port_mtu_bytes{device="rxe0",port="1"} 1024)"), std::string::npos);
  EXPECT_EQ(text.find("fabric_health_self"), std::string::npos) << "no self-connection without an Active port";
}

TEST(sweep_prometheus, a_two_rail_host_its_pcie_links_and_its_rail_pair) {
  sweep::health_report rep;
  fabric::port_info p;
  p.port = 1;
  p.state = IBV_PORT_ACTIVE;
  p.link_layer = IBV_LINK_LAYER_INFINIBAND;
  p.active_mtu = 4096;
  p.device = "mlx5_0";
  rep.ports.push_back({p, "ib0", "10.1.0.5"});
  p.device = "mlx5_1";
  p.state = IBV_PORT_DOWN;
  rep.ports.push_back({p, "ib1", "10.2.0.5"});
  rep.devices.push_back({"mlx5_0", fabric::pcie_link{"0000:3b:00.0", 8, 16.0, 16, 16.0}});
  rep.devices.push_back({"mlx5_1", std::nullopt});
  rep.rail_pairs.push_back({0, 1, {}});
  rep.rail_pairs[0].result.latency = fabric::latency_summary{20, 3, 4, 5, 5, 6, 4, 1};
  auto text = sweep::prometheus_text(sweep::options{}, rep, {fabric::exit_code::test_failed, "mlx5_1 port 1 is Down"});
  EXPECT_TRUE(exposition_is_well_formed(text)) << text;
  for (const char* sample : {"fabric_health_ports_active 1\n", "fabric_health_ports_expected 2\n",
                             "fabric_health_pcie_width{device=\"mlx5_0\"} 8\n", "fabric_health_pcie_max_width{device=\"mlx5_0\"} 16\n",
                             "fabric_health_pcie_transfers_per_second{device=\"mlx5_0\"} 16000000000\n",
                             "fabric_health_pcie_max_transfers_per_second{device=\"mlx5_0\"} 16000000000\n",
                             R"(fabric_health_rail_pair_ok{device="mlx5_0",address="10.1.0.5",peer_device="mlx5_1",peer="10.2.0.5"} 0)",
                             R"(fabric_health_rail_pair_rtt_p50_seconds{device="mlx5_0",address="10.1.0.5",peer_device="mlx5_1",peer="10.2.0.5"} 4e-06)"})
    EXPECT_NE(text.find(sample), std::string::npos) << sample << "\n" << text;
  EXPECT_EQ(text.find("device=\"mlx5_1\"} "), std::string::npos) << "no PCIe figure for a device without a link";
  rep.devices[0].pcie.reset();
  text = sweep::prometheus_text(sweep::options{}, rep, {});
  EXPECT_EQ(text.find("fabric_health_pcie"), std::string::npos) << "no PCIe family without a figure\n" << text;
}

}  // namespace

namespace {

TEST(sweep_report, with_repeat_a_pair_is_its_latest_sweep) {
  auto in_sweep = [](std::string line, int sweep) {
    auto j = nlohmann::json::parse(line);
    j["result"]["sweep"] = sweep;
    return j.dump();
  };
  std::vector<std::string> lines{
      in_sweep(meeting_line("n1", "n2", 1, false, false, 0), 1), in_sweep(meeting_line("n1", "n2", 1, false, true, 20), 2),
      in_sweep(meeting_line("n1", "n3", 2, false, true, 21), 1), in_sweep(meeting_line("n2", "n3", 3, false, true, 19), 1),
      in_sweep(meeting_line("n2", "n3", 3, false, false, 0), 2)};
  auto m = sweep::merge(lines, factor3);
  ASSERT_EQ(m.pairs.size(), 3u);
  EXPECT_EQ(m.pairs[0].state, sweep::pair_state::ok) << "n1-n2 failed in sweep 1, passed in sweep 2";
  EXPECT_EQ(m.pairs[0].sweep, 2);
  EXPECT_EQ(m.pairs[1].sweep, 1) << "n1-n3 not met again yet";
  EXPECT_EQ(m.pairs[2].state, sweep::pair_state::failed);
  EXPECT_EQ(m.rounds, 2) << "the latest sweep's rounds";
}

}  // namespace

namespace {

TEST(sweep_checks, each_check_has_one_word_and_unknown_words_none) {
  for (auto c : {sweep::check::ping, sweep::check::connect, sweep::check::ud, sweep::check::acm})
    EXPECT_EQ(sweep::check_of(sweep::check_name(c)), c);
  EXPECT_FALSE(sweep::check_of("PING"));
  EXPECT_FALSE(sweep::check_of(""));
  EXPECT_FALSE(sweep::check_of(std::string_view("ud\0x", 4)));
}

TEST(sweep_report, one_check_a_matrix_the_first_lines_or_the_one_asked_for) {
  auto of_check = [](std::string line, const char* check) {
    auto j = nlohmann::json::parse(line);
    j["result"]["check"] = check;
    return j.dump();
  };
  std::vector<std::string> lines{of_check(meeting_line("n1", "n2", 1, false, true, 900), "connect"),
                                 of_check(meeting_line("n1", "n2", 1, false, true, 20), "ud"),
                                 of_check(meeting_line("n1", "n2", 1, false, false, 0), "ping"),
                                 meeting_line("n1", "n3", 1, false, true, 25)};  // no check: an RC ping's line
  auto first = sweep::merge(lines, factor3);
  EXPECT_EQ(first.check, sweep::check::connect);
  ASSERT_EQ(first.pairs.size(), 1u) << "only connect's hosts";
  EXPECT_DOUBLE_EQ(first.pairs[0].latency()->p50, 900);
  EXPECT_TRUE(std::any_of(first.notes.begin(), first.notes.end(),
                          [](const std::string& n) { return n.find("3 pair lines of other checks") != std::string::npos; }));
  auto ping = sweep::merge(lines, factor3, sweep::check::ping);
  ASSERT_EQ(ping.pairs.size(), 3u) << "n1-n2, n1-n3 and the pair of hosts never met";
  EXPECT_EQ(ping.pairs[0].state, sweep::pair_state::failed);
  EXPECT_EQ(ping.pairs[1].state, sweep::pair_state::ok);
  EXPECT_NE(sweep::format_matrix(first).find("p50 connection setup time"), std::string::npos);
  // A check the lines do not have: an error that says what they have, not
  // a matrix of missing pairs.
  try {
    sweep::merge(lines, factor3, sweep::check::bw);
    ADD_FAILURE() << "a matrix of bw pairs from none";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage);
    EXPECT_STREQ(e.what(), "--check bw: the input has no bw pair lines, only pair lines of connect (1), ping (2), ud (1)");
  }
  EXPECT_EQ(sweep::merge({}, factor3, sweep::check::bw).hosts.size(), 0u) << "no pair lines at all: nothing to say";
}

}  // namespace

TEST(sweep_options, json_keys_of_the_host_list_and_the_files_are_apart_from_the_documents_keys) {
  // hosts is an array of names, pairs a count, outliers an event elsewhere
  // in the documents: these options' keys say what they hold instead.
  auto run = sweep::options_json(parse_options<sweep::options>({"--hosts", "n[1-4]", "--pairs", "again.txt"}));
  EXPECT_EQ(run["hostlist"], "n[1-4]");
  EXPECT_EQ(run["pairs_file"], "again.txt");
  EXPECT_FALSE(run.contains("hosts"));
  EXPECT_FALSE(run.contains("pairs"));
  auto report = sweep::options_json(parse_options<sweep::options>({"report", "--outliers", "again.txt"}));
  EXPECT_EQ(report["outliers_file"], "again.txt");
  EXPECT_FALSE(report.contains("outliers"));
  EXPECT_TRUE(sweep::options_json(parse_options<sweep::options>({}))["hostlist"].is_null());
}

TEST(sweep_options, timeout_bounds_each_wait_and_pair_timeout_the_pair_defaulting_to_it) {
  auto opt = parse_options<sweep::options>({"--timeout", "3000"});
  EXPECT_EQ(opt.run.each_wait(), std::chrono::milliseconds(3000));
  EXPECT_EQ(opt.run.pair_timeout(), std::chrono::milliseconds(3000));
  EXPECT_EQ(sweep::options_json(opt)["pair_timeout"], 3000);
  opt = parse_options<sweep::options>({"--timeout", "3000", "--pair-timeout", "9000"});
  EXPECT_EQ(opt.run.each_wait(), std::chrono::milliseconds(3000));
  EXPECT_EQ(opt.run.pair_timeout(), std::chrono::milliseconds(9000));
  // bw's writes must end within the pair's time, not within one wait.
  opt = parse_options<sweep::options>({"--check", "bw", "--duration", "5000", "--timeout", "3000", "--pair-timeout", "9000"});
  EXPECT_NO_THROW(sweep::validate(opt));
  opt = parse_options<sweep::options>({"--check", "bw", "--duration", "5000", "--timeout", "9000", "--pair-timeout", "3000"});
  EXPECT_THROW(sweep::validate(opt), fabric::error);
}
