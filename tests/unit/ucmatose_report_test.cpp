#include "ucmatose.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {
ucmatose::report sample() {
  ucmatose::report r;
  r.role = "client";
  r.opt.count = 10;
  r.opt.connections = 3;
  for (int i = 0; i < 3; ++i) {
    auto& c = r.connections.emplace_back();
    c.index = i;
    c.connected = i < 2;
    c.sent = c.connected ? 10 : 0;
    c.received = i == 0 ? 10 : (i == 1 ? 7 : 0);
    c.step_us[static_cast<std::size_t>(ucmatose::step::connect)] = c.connected ? 100.0 * (i + 1) : -1;
  }
  r.connections[2].error = "connect: RDMA_CM_EVENT_REJECTED";
  r.connect_seconds = 0.5;
  return r;
}
}  // namespace

TEST(ucmatose_report, step_summary_skips_steps_not_reached) {
  auto s = ucmatose::summarize_step(sample(), ucmatose::step::connect);
  EXPECT_EQ(s.samples, 2);
  EXPECT_DOUBLE_EQ(s.min, 100);
  EXPECT_DOUBLE_EQ(s.max, 200);
  EXPECT_DOUBLE_EQ(s.mean, 150);
  EXPECT_EQ(ucmatose::summarize_step(sample(), ucmatose::step::destroy).samples, 0);
}

TEST(ucmatose_report, rate_counts_established_connections) {
  EXPECT_DOUBLE_EQ(ucmatose::connections_per_second(sample()), 4.0);
}

TEST(ucmatose_report, json_counts_loss_over_connected_only) {
  nlohmann::json j;
  ucmatose::to_json(j, sample());
  EXPECT_EQ(j["counts"]["connected"], 2);
  EXPECT_EQ(j["counts"]["expected"], 20);
  EXPECT_EQ(j["counts"]["received"], 17);
  EXPECT_EQ(j["counts"]["lost"], 3);
  EXPECT_EQ(j["connections"][2]["error"], "connect: RDMA_CM_EVENT_REJECTED");
  EXPECT_TRUE(j["connections"][0]["error"].is_null());
  EXPECT_TRUE(j["steps_us"].contains("connect"));
  EXPECT_FALSE(j["steps_us"].contains("destroy"));
}

TEST(ucmatose_report, stats_lines_name_each_step_reached) {
  auto lines = ucmatose::format_stats(sample());
  ASSERT_EQ(lines.size(), 3u);  // header, connect, rate
  EXPECT_EQ(lines[1].rfind("connect ", 0), 0u);
  EXPECT_EQ(lines[2], "connections/s  4.0");
}
