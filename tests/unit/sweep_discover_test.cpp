// fabric-sweep discover's command line, its document without a walk, and
// the walk's clear error on a host without InfiniBand.
#include "fabric-sweep/discover/discover.hpp"
#include "fabric-sweep/discover/walk.hpp"

#include "parse_options.hpp"
#include "../subnet/synthetic.hpp"

#include "fabric/base/error.hpp"

#include <gtest/gtest.h>

#include <filesystem>

TEST(sweep_discover, its_options_by_their_long_names) {
  auto opt = parse_options<sweep::options>(
      {"discover", "-o", "fabric.json", "--ca", "mlx5_0", "--port", "2", "--timeout", "250", "--no-counters"});
  EXPECT_EQ(opt.mode, sweep::mode::discover);
  auto j = sweep::options_json(opt);
  EXPECT_EQ(j, (nlohmann::json{{"output", "fabric.json"}, {"ca", "mlx5_0"}, {"port", 2}, {"timeout", 250}, {"no_counters", true}}));
  auto plain = sweep::options_json(parse_options<sweep::options>({"discover"}));
  EXPECT_TRUE(plain["output"].is_null());
  EXPECT_TRUE(plain["port"].is_null());
  EXPECT_EQ(plain["timeout"], 1000);
}

TEST(sweep_discover, the_sweeps_options_are_not_its_own) {
  for (std::vector<std::string> args : {std::vector<std::string>{"discover", "--hosts", "a,b"},
                                        {"discover", "--outlier-factor", "3"}, {"--timeout", "50", "discover"}})
    EXPECT_THROW(parse_options<sweep::options>(args), fabric::error) << args[1];
  EXPECT_THROW(parse_options<sweep::options>({"discover", "--port", "255"}), CLI::ValidationError);
}

TEST(sweep_discover, a_document_without_a_walk_has_its_schema_and_no_summary) {
  sweep::discover_report rep;
  nlohmann::json j;
  sweep::to_json(j, parse_options<sweep::options>({"discover"}), rep);
  EXPECT_EQ(j["schema"], "fabric-toolkit/fabric-sweep-discover/1");
  EXPECT_EQ(j["role"], "discover");
  EXPECT_TRUE(j["summary"].empty());
  EXPECT_TRUE(j["results"].empty());
}

TEST(sweep_discover, what_did_not_answer_one_line_each) {
  auto f = synthetic::fat_tree({.leaves = 2, .spines = 1, .hosts = 1});
  f.silent.push_back({f.nodes[0].guid, 9, "the node behind spine01 port 9 did not answer"});
  f.nodes[1].error = "its forwarding table did not answer (LIDs 0-63)";
  auto lines = sweep::unanswered_lines(f);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "the node behind spine01 port 9 did not answer");
  EXPECT_EQ(lines[1], "leaf01 (0x0200000000000001): its forwarding table did not answer (LIDs 0-63)");
  sweep::discover_report rep;
  rep.model = f;
  std::size_t nodes = 0;
  sweep::each_node(rep, [&](const nlohmann::json& n) { EXPECT_EQ(n["index"], nodes++); });
  EXPECT_EQ(nodes, f.nodes.size());
}

TEST(sweep_discover, a_host_without_infiniband_is_a_clear_no_device) {
  if (std::filesystem::exists("/sys/class/infiniband") && !std::filesystem::is_empty("/sys/class/infiniband"))
    GTEST_SKIP() << "this host has RDMA devices";
  try {
    sweep::subnet::walk({}, {});
    FAIL() << "a walk without a device";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::no_device);
    EXPECT_NE(std::string(e.what()).find("InfiniBand"), std::string::npos) << e.what();
  }
}
