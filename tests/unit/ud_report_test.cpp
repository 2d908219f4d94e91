#include "fabric/ud_report.hpp"

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
  auto t = totals(rs);
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
  EXPECT_EQ(loss_verdict({}).first, exit_code::ok);
  auto [code, why] = loss_verdict({.expected = 20, .sent = 20, .received = 17, .lost = 3, .verify_errors = 2});
  EXPECT_EQ(code, exit_code::test_failed);
  EXPECT_EQ(why, "lost 3 of 20 messages: received 17");
  EXPECT_EQ(loss_verdict({.verify_errors = 2}).second, "2 messages failed verification");
}

TEST(ud_report, the_first_failure_is_kept) {
  tool_result r;
  EXPECT_TRUE(r.fail(error(exit_code::timeout, "first")));
  EXPECT_FALSE(r.fail(error(exit_code::system, "second")));
  EXPECT_EQ(r.state, "failed");
  EXPECT_EQ(r.error, "first");
}

TEST(ud_report, json_shows_the_counts_asked_for) {
  auto r = ready(3, 10, 8, 1);
  r.qpn = 17;
  nlohmann::json both, receiver, sender;
  to_json(both, r, {.sent = true, .received = true, .verify = true});
  EXPECT_EQ(both["index"], 3);
  EXPECT_EQ(both["qpn"], 17);
  EXPECT_FALSE(both.contains("error"));
  EXPECT_FALSE(both.contains("qkey"));
  EXPECT_EQ(both["lost"], 2);
  EXPECT_EQ(both["verify_errors"], 1);
  to_json(receiver, r, {.sent = false, .received = true});
  EXPECT_FALSE(receiver.contains("sent"));
  EXPECT_FALSE(receiver.contains("verify_errors"));
  to_json(sender, r, {.sent = true, .received = false});
  EXPECT_FALSE(sender.contains("received"));
  EXPECT_FALSE(sender.contains("lost"));
  nlohmann::json t;
  add_totals(t, totals(std::vector<tool_result>{r}), {.sent = true, .received = true});
  EXPECT_EQ(t["expected"], 10);
  EXPECT_EQ(t["lost"], 2);
}
