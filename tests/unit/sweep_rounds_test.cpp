// fabric-sweep's rounds beyond every pair: ClusterKit's quick round, and
// the rounds of a --pairs file, every bad line of
// which is a usage error naming it; and where a process stands.
#include "fabric-sweep/rank/meetings.hpp"
#include "fabric-sweep/rank/place.hpp"
#include "fabric-sweep/rank/rounds.hpp"

#include "fabric/base/error.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace {

using rounds_t = std::vector<std::vector<sweep::pairing>>;

/// Each round's pairs as host names, "a-b", in order.
std::vector<std::vector<std::string>> names(const rounds_t& rs, const std::vector<std::string>& hosts) {
  std::vector<std::vector<std::string>> out;
  for (const auto& round : rs) {
    auto& named = out.emplace_back();
    for (std::size_t i = 0; i < round.size(); ++i) {
      EXPECT_EQ(round[i].slot, static_cast<int>(i)) << "slots number each round's pairs";
      named.push_back(hosts[static_cast<std::size_t>(round[i].server)] + "-" + hosts[static_cast<std::size_t>(round[i].client)]);
    }
  }
  return out;
}

const std::vector<std::string> hosts{"n1", "n2", "n3", "n4", "n5"};

/// Each host in one pair a round and each pair once: the pairs met.
std::set<sweep::rank_pair> checked(const rounds_t& rs) {
  std::set<sweep::rank_pair> met;
  for (const auto& round : rs) {
    std::set<int> busy;
    for (std::size_t i = 0; i < round.size(); ++i) {
      EXPECT_EQ(round[i].slot, static_cast<int>(i));
      EXPECT_LT(round[i].server, round[i].client);
      EXPECT_TRUE(busy.insert(round[i].server).second && busy.insert(round[i].client).second) << "a host twice in a round";
      EXPECT_TRUE(met.insert({round[i].server, round[i].client}).second) << "a pair twice";
    }
  }
  return met;
}

std::vector<sweep::rank_pair> every_pair(int n, int from = 0) {
  std::vector<sweep::rank_pair> out;
  for (int a = from; a < from + n; ++a)
    for (int b = a + 1; b < from + n; ++b) out.emplace_back(a, b);
  return out;
}

TEST(sweep_rounds, quick_is_one_round_of_the_lower_half_against_the_upper) {
  EXPECT_EQ(names(sweep::quick_round(4), hosts), (std::vector<std::vector<std::string>>{{"n1-n3", "n2-n4"}}));
  EXPECT_EQ(names(sweep::quick_round(2), hosts), (std::vector<std::vector<std::string>>{{"n1-n2"}}));
  EXPECT_TRUE(sweep::quick_round(1).empty());
}

TEST(sweep_rounds, quick_with_an_odd_number_of_hosts_pairs_the_last_one_too) {
  // The last host had no peer, and nothing said so: a second, short round
  // meets it with the lower half's last host, each host busy with one peer
  // a round.
  EXPECT_EQ(names(sweep::quick_round(5), hosts), (std::vector<std::vector<std::string>>{{"n1-n3", "n2-n4"}, {"n2-n5"}}));
  EXPECT_EQ(names(sweep::quick_round(3), hosts), (std::vector<std::vector<std::string>>{{"n1-n2"}, {"n1-n3"}}));
  for (int n = 2; n <= 41; ++n) {
    auto rs = sweep::quick_round(n);
    std::set<int> met;
    for (auto [a, b] : checked(rs)) met.insert({a, b});
    EXPECT_EQ(met.size(), static_cast<std::size_t>(n)) << "every host of " << n << " meets a peer";
    EXPECT_EQ(rs.size(), n % 2 == 0 ? 1u : 2u);
  }
}

TEST(sweep_rounds, every_pair_packs_into_the_circle_methods_rounds) {
  // A first fit in rank order took 511 rounds for every pair of 300 hosts.
  for (int n = 2; n <= 40; ++n) EXPECT_EQ(sweep::pack_rounds(every_pair(n)).size(), sweep::rounds(n).size()) << n;
  for (int n : {7, 12, 33}) {
    auto packed = sweep::pack_rounds(every_pair(n)), circle = sweep::rounds(n);
    ASSERT_EQ(packed.size(), circle.size());
    for (std::size_t r = 0; r < packed.size(); ++r)
      for (std::size_t i = 0; i < packed[r].size(); ++i)
        EXPECT_TRUE(packed[r][i].server == circle[r][i].server && packed[r][i].client == circle[r][i].client) << n;
  }
  auto all = every_pair(300);
  std::reverse(all.begin(), all.end());
  auto rs = sweep::pack_rounds(all);
  EXPECT_EQ(rs.size(), 299u);
  EXPECT_EQ(checked(rs).size(), 300u * 299 / 2);
  EXPECT_EQ(sweep::pack_rounds(every_pair(301)).size(), 301u);
  // Every pair of 100 hosts among 2,000 ranks: the hosts they name count.
  EXPECT_EQ(sweep::pack_rounds(every_pair(100, 1900)).size(), 99u);
}

TEST(sweep_rounds, fewer_pairs_pack_into_no_more_rounds_than_their_hosts_need) {
  // One host slow with nine peers: nine rounds; nine separate links: one.
  std::vector<sweep::rank_pair> star, links;
  for (int k = 1; k <= 9; ++k) star.emplace_back(0, k * 7);
  for (int k = 0; k < 9; ++k) links.emplace_back(2 * k, 2 * k + 1);
  EXPECT_EQ(sweep::pack_rounds(star).size(), 9u);
  EXPECT_EQ(sweep::pack_rounds(links).size(), 1u);
  // Pairs of 60 hosts at random: each met once, within the hosts' rounds.
  std::vector<sweep::rank_pair> some;
  unsigned x = 12345;
  std::vector<int> degree(60, 0);
  for (auto p : every_pair(60)) {
    x = x * 1103515245 + 12345;
    if ((x >> 16) % 3 == 0) {
      some.push_back(p);
      ++degree[static_cast<std::size_t>(p.first)], ++degree[static_cast<std::size_t>(p.second)];
    }
  }
  auto rs = sweep::pack_rounds(some);
  EXPECT_EQ(checked(rs), std::set<sweep::rank_pair>(some.begin(), some.end()));
  EXPECT_LE(rs.size(), 59u);
  EXPECT_GE(rs.size(), static_cast<std::size_t>(*std::max_element(degree.begin(), degree.end())));
}

TEST(sweep_rounds, a_pairs_file_with_round_numbers_is_met_in_their_order) {
  auto rs = sweep::rounds_from_file("# ClusterKit's custom mode\n3 n1 n3\n1 n3 n4\n\n1 n1 n2.cluster\n  3 n5 n2  \n", "p", hosts);
  EXPECT_EQ(names(rs, hosts), (std::vector<std::vector<std::string>>{{"n1-n2", "n3-n4"}, {"n1-n3", "n2-n5"}}));
}

TEST(sweep_rounds, a_pairs_file_without_round_numbers_is_packed) {
  auto rs = sweep::rounds_from_file("n1 n2\nn2 n3\nn4 n5\n", "p", hosts);
  EXPECT_EQ(names(rs, hosts), (std::vector<std::vector<std::string>>{{"n1-n2", "n4-n5"}, {"n2-n3"}}));
}

TEST(sweep_rounds, a_comment_starts_anywhere_on_a_line) {
  // The man page says '#' starts a comment: "a b # x" was refused.
  auto rs = sweep::rounds_from_file("n1 n2 # the slow link\nn2 n3\t#\nn4 n5#again\n  # n1 n5\n#", "p", hosts);
  EXPECT_EQ(names(rs, hosts), (std::vector<std::vector<std::string>>{{"n1-n2", "n4-n5"}, {"n2-n3"}}));
  rs = sweep::rounds_from_file("1 n1 n2 # round one\r\n2 n1 n3\r\n", "p", hosts);
  EXPECT_EQ(names(rs, hosts), (std::vector<std::vector<std::string>>{{"n1-n2"}, {"n1-n3"}}));
}

TEST(sweep_rounds, the_first_runs_bar_is_read_with_the_pairs_from_the_header) {
  // The file is read once, as it comes: the "#bar" line of report
  // --outliers among the comments before the first pair, a comment line
  // too long for a bar line skipped without being held.
  auto path = testing::TempDir() + "/pairs-with-bar";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::string text = "# fabric-sweep report\n#" + std::string(100'000, 'x') + "\n#bar bw 80 gbps\n#bar ping 53.5 us\n" +
                       "n1 n2\n#bar ping 99 us\nn3 n4\n";
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  sweep::run_options o;
  o.pairs_file = path;
  sweep::place where;
  where.hosts = hosts;
  std::optional<double> bar;
  EXPECT_EQ(names(sweep::schedule_of(o, where, &bar), hosts), (std::vector<std::vector<std::string>>{{"n1-n2", "n3-n4"}}));
  EXPECT_EQ(bar, 53.5) << "the ping bar before the first pair";
  o.check = sweep::check::bw;
  sweep::schedule_of(o, where, &bar);
  EXPECT_EQ(bar, 80);
  o.check = sweep::check::connect;
  sweep::schedule_of(o, where, &bar);
  EXPECT_FALSE(bar);
  std::remove(path.c_str());
}

TEST(sweep_rounds, every_pair_of_2000_hosts_is_read_and_packed_in_seconds) {
  // 24 MB of 'HOST HOST' lines: a rank once spent minutes on them, deaf
  // to SIGTERM (a look-up along the host list for each name, and a set
  // per round for each pair), and packed them into more rounds than 1,999.
  std::vector<std::string> fleet;
  for (int i = 1; i <= 2000; ++i) fleet.push_back(fmt::format("n{:04}", i));
  std::string text;
  text.reserve(24'000'000);
  for (std::size_t a = 0; a < fleet.size(); ++a)
    for (std::size_t b = a + 1; b < fleet.size(); ++b) text.append(fleet[a]).append(" ").append(fleet[b]).append("\n");
  EXPECT_EQ(text.size(), 23'988'000u);
  auto t0 = std::chrono::steady_clock::now();
  auto rs = sweep::rounds_from_file(text, "p", fleet);
  auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(rs.size(), 1999u);
  std::size_t pairs = 0;
  for (const auto& r : rs) pairs += r.size();
  EXPECT_EQ(pairs, 1'999'000u);
  EXPECT_LT(took, 10.0) << "seconds to read and pack";
  RecordProperty("seconds", fmt::format("{:.2f}", took));
  // The wrong line of such a file is named as at once as a small one's.
  text += "n0001 n0002\n";
  try {
    sweep::rounds_from_file(text, "p", fleet);
    ADD_FAILURE() << "a pair twice was accepted";
  } catch (const fabric::error& e) {
    EXPECT_NE(std::string(e.what()).find("p:1999001: n0001 and n0002 are paired on line 1 already"), std::string::npos)
        << e.what();
  }
}

TEST(sweep_rounds, every_bad_line_of_a_pairs_file_is_a_usage_error_naming_it) {
  struct bad_case {
    std::string text;
    const char* says;
  };
  for (auto [text, says] : std::initializer_list<bad_case>{
           {"n1 n2\nn1 nx\n", "p:2: nx is not one of the sweep's hosts"},
           {"n1 n1\n", "p:1: n1 is paired with itself"},
           {"n1 n2\n# again\nn2 n1\n", "p:3: n1 and n2 are paired on line 1 already"},
           {"1 n1 n2\n1 n2 n3\n", "p:2: n2 is in round 1 already (line 1)"},
           {"n1\n", "p:1: expected 'HOST HOST' or 'ROUND HOST HOST'"},
           {"1 n1 n2 n3\n", "p:1: expected"},
           {"0 n1 n2\n", "p:1: '0' is not a round number"},
           {"x n1 n2\n", "p:1: 'x' is not a round number"},
           {"99999999999999999999 n1 n2\n", "p:1: '99999999999999999999' is not a round number"},
           {"1 n1 n2\nn3 n4\n", "p:2: no round number, where the first pair line has one"},
           {"n1 n2\n2 n3 n4\n", "p:2: a round number, where the first pair line has none"},
           {"n1 \xff\x1b[2J\n", "p:1: \\xff\\x1b[2J is not one of the sweep's hosts"},
           {"n1 n2\nn3 " + std::string(256, 'x') + "\n", "p:2: a word longer than 255 bytes, longer than any host's name"},
           {"n1 n2 n3 n4 n5 n1 n2\n", "p:1: expected 'HOST HOST' or 'ROUND HOST HOST'"},
           {"# nothing\n\n", "p: no pairs in it"},
       }) {
    try {
      sweep::rounds_from_file(text, "p", hosts);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const fabric::error& e) {
      EXPECT_EQ(e.code(), fabric::exit_code::usage) << text;
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
    }
  }
}

TEST(sweep_rounds, the_schedule_follows_the_mode) {
  sweep::run_options o;
  sweep::place where;
  where.hosts = {"a", "b", "c", "d"};
  EXPECT_EQ(sweep::schedule_of(o, where).size(), 3u);
  o.quick = true;
  EXPECT_EQ(sweep::schedule_of(o, where).size(), 1u);
  o.quick = false;
  o.pairs_file = testing::TempDir();  // a directory is not a pairs file
  EXPECT_THROW(sweep::schedule_of(o, where), fabric::error);
  o.pairs_file = testing::TempDir() + "/no-such-pairs";
  EXPECT_THROW(sweep::schedule_of(o, where), fabric::error);
}

TEST(sweep_place, srun_on_part_of_an_allocation_reads_the_steps_nodes) {
  sweep::run_options o;
  auto p = sweep::find_place(o,
                             {{"SLURM_PROCID", "1"},
                              {"SLURM_NTASKS", "2"},
                              {"SLURM_JOB_NODELIST", "node[01-04]"},
                              {"SLURM_STEP_NODELIST", "node[02-03]"}},
                             "x");
  EXPECT_EQ(p.hosts, (std::vector<std::string>{"node02", "node03"}));
  EXPECT_EQ(p.rank, 1);
}

TEST(sweep_place, a_host_named_twice_is_refused) {
  sweep::run_options o;
  o.hosts = "a,b,a";
  o.rank = 0;
  EXPECT_THROW(sweep::find_place(o, {}, "a"), fabric::error);
  EXPECT_THROW(sweep::find_place({}, {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "3"}, {"SLURM_JOB_NODELIST", "n1,n2,n1"}}, "x"),
               fabric::error);
}

TEST(sweep_place, many_tasks_a_node_each_named_in_hosts_take_their_task_number) {
  sweep::run_options o;
  o.hosts = "r[1-8]";
  auto p = sweep::find_place(o, {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_JOB_NODELIST", "g[1-2]"}}, "g1");
  EXPECT_EQ(p.rank, 5);
  EXPECT_EQ(p.source, "slurm");
  // Another task count than the list: no guess.
  EXPECT_THROW(sweep::find_place(o, {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "7"}}, "g1"), fabric::error);
}

TEST(sweep_run_id, slurm_names_the_run_for_every_rank_else_rank_0_by_its_time) {
  EXPECT_EQ(sweep::new_run_id({{"SLURM_JOB_ID", "42"}, {"SLURM_STEP_ID", "3"}}), "slurm-42.3");
  auto mine = sweep::new_run_id({});
  EXPECT_EQ(mine.size(), 33u) << mine;  // 2026-11-25T14:30:00.123Z-0123abcd
  EXPECT_EQ(mine.substr(23, 2), "Z-") << mine;
  EXPECT_NE(mine, sweep::new_run_id({})) << "two runs, two names";
}

TEST(sweep_meeting, rank_0s_answer_names_the_run_and_who_came_and_lies_are_refused) {
  sweep::agreement a;
  a.run = "slurm-42.3";
  a.present = {0, 2, 3};
  auto back = sweep::read_agreement(sweep::agreement_line(a), 4);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->run, "slurm-42.3");
  EXPECT_EQ(back->present, a.present);
  for (const char* lie : {R"({"retest":[],"present":[2,0]})", R"({"retest":[],"present":[0,0]})",
                          R"({"retest":[],"present":[0,4]})", R"({"retest":[],"present":[1,2]})",
                          R"({"retest":[],"present":"all"})", R"({"retest":[],"present":[0,1.5]})",
                          R"({"retest":[],"run":7})"})
    EXPECT_FALSE(sweep::read_agreement(lie, 4)) << lie;
  EXPECT_FALSE(sweep::read_agreement(R"({"retest":[],"run":")" + std::string(200, 'x') + "\"}", 4)) << "a run name too long";
}

TEST(sweep_meeting, a_rank_tells_what_keeps_it_from_rdma_and_rank_0_tells_everyone) {
  auto line = sweep::rank_line(-1, {2, {}, "no RDMA device has the address 10.0.0.7"});
  auto said = sweep::read_rank_line(line, 4, -1);
  ASSERT_TRUE(said);
  EXPECT_EQ(said->trouble, "no RDMA device has the address 10.0.0.7");
  // Its bytes are kept printable, and a long one is cut to what rank 0 takes.
  said = sweep::read_rank_line(sweep::rank_line(-1, {2, {}, "port\x1b[2J" + std::string(1000, 'x')}), 4, -1);
  ASSERT_TRUE(said);
  EXPECT_EQ(said->trouble.size(), sweep::max_trouble_bytes);
  EXPECT_EQ(said->trouble.find('\x1b'), std::string::npos);
  for (const std::string& lie : std::vector<std::string>{R"({"rank":1,"sweep":-1,"figures":[],"trouble":7})",
                                                         R"({"rank":1,"sweep":-1,"figures":[],"trouble":""})",
                                                         R"({"rank":1,"sweep":-1,"figures":[],"trouble":")" +
                                                             std::string(300, 'x') + "\"}"})
    EXPECT_FALSE(sweep::read_rank_line(lie, 4, -1)) << lie;

  sweep::agreement a;
  a.present = {0, 1, 2, 3};
  a.unable = {{1, "rxe0 port 1 is DOWN"}, {2, "no RDMA device has the address 10.0.0.3"}, {3, "rxe0 port 1 is DOWN"}};
  auto answer = sweep::agreement_line(a);
  auto back = sweep::read_agreement(answer, 4);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->unable, a.unable);
  EXPECT_EQ(answer.find("DOWN"), answer.rfind("DOWN")) << "a trouble that ranks share is said once: " << answer;
  for (const char* lie : {R"({"retest":[],"unable":[[3,0],[1,0]],"troubles":["a"]})",
                          R"({"retest":[],"unable":[[1,0],[1,0]],"troubles":["a"]})",
                          R"({"retest":[],"unable":[[4,0]],"troubles":["a"]})", R"({"retest":[],"unable":[[1,1]],"troubles":["a"]})",
                          R"({"retest":[],"unable":[[1,-1]],"troubles":["a"]})", R"({"retest":[],"unable":[[1]],"troubles":["a"]})",
                          R"({"retest":[],"unable":[[1,0]],"troubles":[""]})", R"({"retest":[],"unable":[[1,0]],"troubles":[7]})",
                          R"({"retest":[],"unable":[[1,0]]})", R"({"retest":[],"unable":[["1",0]],"troubles":["a"]})",
                          R"({"retest":[],"unable":[[1,0]],"troubles":["a","b"]})",
                          R"({"retest":[],"unable":{"1":0},"troubles":["a"]})"})
    EXPECT_FALSE(sweep::read_agreement(lie, 4)) << lie;
}

}  // namespace
