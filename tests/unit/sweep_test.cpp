// fabric-sweep's logic: the round schedule, where a process stands, the
// address rule, and the merged report.
#include "sweep.hpp"

#include "fabric/error.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

namespace {

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
  nlohmann::json line{{"schema", "fabric-toolkit/fabric-sweep/1"}, {"tool", "fabric-sweep"}, {"event", "pair"}, {"pair", pair}};
  return prefix + line.dump();
}

TEST(sweep_report, merges_prefixed_lines_names_the_slow_and_the_missing) {
  nlohmann::json hosts{{"tool", "fabric-sweep"}, {"event", "sweep"}, {"sweep", {{"hosts", {"n1", "n2", "n3", "n4", "n5"}}}}};
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
  auto m = sweep::merge(lines, 3.0);
  ASSERT_EQ(m.hosts.size(), 5u);
  EXPECT_EQ(m.pairs.size(), 10u);
  EXPECT_EQ(m.count("slow"), 1u);
  EXPECT_EQ(m.count("failed"), 2u);
  EXPECT_EQ(m.count("missing"), 2u);  // n3-n5, n4-n5
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
  auto m = sweep::merge(lines, 3.0);
  EXPECT_TRUE(sweep::judge(m).ok());
  EXPECT_EQ(sweep::html_page(m).find("<b>"), std::string::npos);
  EXPECT_FALSE(sweep::judge(sweep::merge({}, 3.0)).ok());
}

}  // namespace

namespace {

TEST(sweep_report, long_lines_split_by_srun_are_joined_again) {
  auto line = pair_line("", "n1", "n2", true, 20);
  auto cut = line.size() / 3;
  std::vector<std::string> lines{"0: " + line.substr(0, cut), "1: " + pair_line("", "n1", "n3", true, 21),
                                 "0: " + line.substr(cut, cut), "0: " + line.substr(2 * cut),
                                 "2: {\"never\": \"ends", "2: " + pair_line("", "n2", "n3", true, 22)};
  auto m = sweep::merge(lines, 3.0);
  EXPECT_EQ(m.count("ok"), 3u);
  EXPECT_EQ(m.notes.size(), 1u) << "the piece that never ended";
}

}  // namespace
