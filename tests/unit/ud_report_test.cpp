#include "fabric/cli/ud_report.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace fabric;

namespace {
struct tool_result : ud_result {
  int extra = 0;
};

tool_result ready(std::size_t index, std::uint64_t expected, std::uint64_t received, std::uint64_t bad = 0) {
  tool_result r;
  r.index = index;
  r.state = "connected";
  r.expected = expected;
  r.received = received;
  r.sent = expected;
  r.verify_errors = bad;
  return r;
}
}  // namespace

TEST(ud_report, totals_sum_every_qp) {
  std::vector<tool_result> rs{ready(0, 10, 10), ready(1, 10, 7, 2)};
  auto t = totals(rs, "connected");
  EXPECT_EQ(t.expected, 20u);
  EXPECT_EQ(t.sent, 20u);
  EXPECT_EQ(t.received, 17u);
  EXPECT_EQ(t.lost, 3u);
  EXPECT_EQ(t.verify_errors, 2u);
}

TEST(ud_report, more_received_than_expected_is_no_loss) { EXPECT_EQ(ready(0, 5, 9).lost(), 0u); }

TEST(ud_report, loss_lines_name_only_ready_qps_that_lost_or_failed_verification) {
  std::vector<tool_result> rs{ready(0, 10, 10), ready(1, 10, 7, 2), ready(2, 10, 0)};
  rs[2].state = "failed";
  auto lines = loss_lines("udaddy: connection", "connected", rs);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "udaddy: connection 1: received 7 of 10 messages, 3 lost");
  EXPECT_EQ(lines[1], "udaddy: connection 1: 2 messages failed verification");
}

TEST(ud_report, verdict_names_loss_before_verification) {
  EXPECT_TRUE(loss_verdict({}).ok());
  ud_totals t;
  t.expected = 20;
  t.sent = 20;
  t.received = 17;
  t.lost = 3;
  t.verify_errors = 2;
  auto v = loss_verdict(t);
  EXPECT_EQ(v.code, exit_code::test_failed);
  EXPECT_EQ(v.reason, "lost 3 of 20 messages: received 17");
  ud_totals bad;
  bad.verify_errors = 2;
  EXPECT_EQ(loss_verdict(bad).reason, "2 messages failed verification");
}

TEST(ud_report, the_first_failure_is_kept) {
  tool_result r;
  EXPECT_TRUE(r.fail(error(exit_code::timeout, "first")));
  EXPECT_FALSE(r.fail(error(exit_code::system, "second")));
  EXPECT_EQ(r.state, "failed");
  EXPECT_EQ(r.error, "first");
}

TEST(ud_report, an_item_is_ok_only_when_ready_and_whole) {
  auto r = ready(3, 10, 8, 1);
  r.qpn = 17;
  r.setup_us = 250.0;
  auto j = result_json("connection", "connected", "connect_us", r);
  EXPECT_EQ(j["kind"], "connection");
  EXPECT_EQ(j["index"], 3);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["error"], "received 8 of 10 messages, 2 lost");
  EXPECT_EQ(j["qpn"], 17);
  EXPECT_TRUE(j["qkey"].is_null());
  EXPECT_EQ(j["lost"], 2);
  EXPECT_EQ(j["verify_errors"], 1);
  EXPECT_EQ(j["connect_us"], 250.0);
  auto whole = result_json("connection", "connected", "connect_us", ready(0, 10, 10));
  EXPECT_EQ(whole["ok"], true);
  EXPECT_TRUE(whole["error"].is_null());
  tool_result pending;
  EXPECT_EQ(result_json("join", "joined", "join_us", pending)["error"], "pending: never joined");
}

TEST(ud_report, summary_counts_failed_items_and_setup_times) {
  std::vector<tool_result> rs{ready(0, 10, 10), ready(1, 10, 7)};
  rs[0].setup_us = 100.0;
  rs[1].setup_us = 300.0;
  const ud_summary_words words{.head = "udaddy: ", .items = {"connections", "{}"}, .setup = {"connect", "{}"}};
  auto j = summary_fields(words, rs.size(), totals(rs, "connected"), 1e6).json();
  EXPECT_EQ(j["connections"], 2);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["lost"], 3);
  EXPECT_EQ(j["connect"]["count"], 2);
  EXPECT_EQ(j["connect"]["max_us"], 300.0);
  EXPECT_DOUBLE_EQ(j["messages_per_second"].get<double>(), 37.0);
  EXPECT_TRUE(summary_fields(words, 0, {}, std::nullopt).json()["elapsed_us"].is_null());
}

TEST(ud_report, oversize_datagrams_are_counted_and_alone_fail_nothing) {
  std::vector<tool_result> rs{ready(0, 10, 10), ready(1, 10, 10)};
  rs[0].oversize = 5;
  rs[1].oversize = 2;
  auto t = totals(rs, "connected");
  EXPECT_EQ(t.oversize, 7u);
  EXPECT_TRUE(loss_verdict(t).ok());
  auto j = result_json("connection", "connected", "connect_us", rs[0]);
  EXPECT_EQ(j["oversize"], 5);
  EXPECT_EQ(j["ok"], true);
}

TEST(ud_report, a_loss_while_oversize_datagrams_came_is_the_peer_s_protocol_error) {
  std::vector<tool_result> rs{ready(0, 10, 0)};
  rs[0].oversize = 10;
  auto t = totals(rs, "connected");
  t.size = 100;
  auto v = loss_verdict(t);
  EXPECT_EQ(v.code, exit_code::protocol);
  EXPECT_NE(v.reason.find("a datagram larger than our 100-byte messages arrived"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("lost 10 of 10 messages"), std::string::npos) << v.reason;
}
