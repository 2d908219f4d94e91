#include "mckey/mckey.hpp"
#include "parse_options.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <utility>

using namespace mckey;

namespace {

options parse(std::vector<std::string> args) { return parse_options<options>(std::move(args)); }

qp_result joined(std::size_t index, std::uint64_t expected, std::uint64_t received) {
  qp_result q;
  q.index = index;
  q.state = "joined";
  q.qpn = 0x11 + static_cast<std::uint32_t>(index);
  q.dgid = "::ffff:239.1.2.3";
  q.mlid = 0xc001;
  q.sl = 2;
  q.remote_qpn = 0xffffff;
  q.qkey = 0x01234567;
  q.setup_us = 1500.0 + 1000.0 * static_cast<double>(index);
  q.expected = expected;
  q.received = received;
  return q;
}

report receiver(std::uint64_t received0, std::uint64_t received1) {
  report r;
  r.role = "receiver";
  r.results = {joined(0, 10, received0), joined(1, 10, received1)};
  return r;
}

}  // namespace

TEST(mckey_options, defaults_are_the_originals) {
  auto o = parse({"-m", "239.1.1.1"});
  EXPECT_EQ(o.connections, 1);
  EXPECT_EQ(o.count, 10);
  EXPECT_EQ(o.size, 100);
  EXPECT_FALSE(o.sender);
  EXPECT_EQ(o.delay_ms, 3000);
  EXPECT_NO_THROW(validate(o));
}

TEST(mckey_options, group_rules) {
  EXPECT_THROW(validate(parse({})), fabric::error);
  EXPECT_THROW(validate(parse({"-m", "239.1.1.1", "-M", "ff0e::1", "-b", "10.0.0.1"})), fabric::error);
  try {
    validate(parse({"-M", "ff0e::1"}));
    ADD_FAILURE() << "-M without -b passed";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("-b"), std::string::npos);
  }
  EXPECT_NO_THROW(validate(parse({"-M", "ff0e::1", "-b", "10.0.0.1"})));
  EXPECT_THROW(validate(parse({"-m", "239.1.1.1", "-p", "0x106"})), fabric::error);
}

TEST(mckey_options, every_option_is_in_the_json_options) {
  CLI::App app;
  options o;
  fabric::cli::add_output_options(app, o.out);
  add_options(app, o);
  auto keys = fabric::cli::option_keys(app);
  auto j = options_json(o);
  EXPECT_EQ(j.size(), keys.size());
  for (const auto& k : keys) EXPECT_TRUE(j.contains(k)) << k;
}

TEST(mckey_options, short_flags_combine_as_getopt_does) {
  auto o = parse({"-m", "239.1.1.1", "-so", "-l", "-c", "3", "-C", "7", "-S", "64", "-p", "0x2"});
  EXPECT_TRUE(o.sender);
  EXPECT_TRUE(o.send_only);
  EXPECT_TRUE(o.no_loopback);
  EXPECT_EQ(o.connections, 3);
  EXPECT_EQ(o.count, 7);
  EXPECT_EQ(o.size, 64);
  EXPECT_EQ(o.port_space_number, "0x2");
}

TEST(mckey_report, joined_line_is_the_originals) {
  EXPECT_EQ(joined_line(joined(0, 0, 0)), "mckey: joined dgid: ::ffff:239.1.2.3 mlid 0xc001 sl 2");
}

TEST(mckey_report, verdict_counts_what_was_lost) {
  EXPECT_TRUE(judge(receiver(10, 10)).ok());
  auto v = judge(receiver(10, 4));
  EXPECT_EQ(v.code, fabric::exit_code::test_failed);
  EXPECT_EQ(v.reason, "lost 6 of 20 messages: received 14");
  auto lines = loss_lines(receiver(10, 4));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "mckey: qp 1: received 4 of 10 messages, 6 lost");
}

TEST(mckey_report, extra_datagrams_are_not_negative_loss) {
  auto r = receiver(12, 10);
  EXPECT_EQ(r.totals().lost, 0u);
  EXPECT_TRUE(judge(r).ok());
}

TEST(mckey_report, json_has_per_qp_join_results_and_counts) {
  nlohmann::json j;
  to_json(j, parse({"-m", "239.1.2.3", "-c", "2"}), receiver(10, 7));
  EXPECT_EQ(j["role"], "receiver");
  EXPECT_EQ(j["options"]["group"], "239.1.2.3");
  EXPECT_TRUE(j["options"]["unmapped_group"].is_null());
  const auto& s = j["summary"];
  EXPECT_EQ(s["joins"], 2);
  EXPECT_EQ(s["failed"], 1);
  EXPECT_EQ(s["received"], 17);
  EXPECT_EQ(s["expected"], 20);
  EXPECT_EQ(s["lost"], 3);
  EXPECT_EQ(s["join"]["count"], 2);
  EXPECT_EQ(s["join"]["min_us"], 1500.0);
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& q = j["results"][1];
  for (const char* key : {"kind", "index", "ok", "error", "state", "qpn", "dgid", "mlid", "sl", "remote_qpn", "qkey",
                          "join_us", "sent", "received", "expected", "lost", "verify_errors"})
    EXPECT_TRUE(q.contains(key)) << key;
  EXPECT_EQ(q["kind"], "join");
  EXPECT_EQ(q["ok"], false);
  EXPECT_EQ(q["lost"], 3);
  EXPECT_EQ(q["qkey"], 0x01234567);
  EXPECT_EQ(j["results"][0]["ok"], true);
}

TEST(mckey_report, a_sender_is_ok_with_nothing_received) {
  report r = receiver(0, 0);
  r.role = "sender";
  for (auto& q : r.results) {
    q.expected = 0;
    q.sent = 10;
  }
  nlohmann::json j;
  to_json(j, parse({"-m", "239.1.2.3", "-s"}), r);
  EXPECT_EQ(j["summary"]["sent"], 20);
  EXPECT_EQ(j["summary"]["lost"], 0);
  EXPECT_EQ(j["summary"]["failed"], 0);
  EXPECT_EQ(j["results"][0]["ok"], true);
}

TEST(mckey_report, a_failed_join_carries_its_error) {
  report r = receiver(0, 0);
  r.results[1] = qp_result{};
  r.results[1].index = 1;
  r.results[1].state = "failed";
  r.results[1].error = "qp 1 joining 239.1.2.3: RDMA_CM_EVENT_MULTICAST_ERROR";
  nlohmann::json j;
  to_json(j, parse({"-m", "239.1.2.3"}), r);
  const auto& q = j["results"][1];
  EXPECT_EQ(q["state"], "failed");
  EXPECT_EQ(q["ok"], false);
  EXPECT_EQ(q["error"], "qp 1 joining 239.1.2.3: RDMA_CM_EVENT_MULTICAST_ERROR");
  EXPECT_TRUE(q["dgid"].is_null());
  EXPECT_TRUE(q["join_us"].is_null());
}
