#include "parse_options.hpp"
#include "ucmatose/payload.hpp"
#include "fabric/base/idle_deadline.hpp"
#include "ucmatose/ucmatose.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <vector>

namespace {

ucmatose::report sample_report() {
  ucmatose::report r;
  r.role = "client";
  r.messages = 10;
  r.wanted = 2;
  r.setup_us = 4000.0;
  for (int i = 0; i < 2; ++i) {
    auto& c = r.connections.emplace_back();
    c.peer = "10.0.0.1:7471";
    c.established = true;
    c.sent = 10;
    c.received = 10;
    c.step_us[static_cast<std::size_t>(ucmatose::step::connect)] = 100.0 * (i + 1);
  }
  return r;
}

nlohmann::json render(const ucmatose::report& r, const ucmatose::options& o = {}) {
  nlohmann::json j;
  ucmatose::to_json(j, o, r);
  return j;
}

}  // namespace

TEST(ucmatose_payload, round_trips_every_sequence_number) {
  for (std::size_t size : {1u, 7u, 8u, 9u, 100u, 4096u}) {
    std::vector<std::byte> buf(size);
    for (std::uint32_t seq : {0u, 1u, 9u, 255u, 65536u}) {
      ucmatose::fill_payload(buf, seq);
      EXPECT_EQ(ucmatose::check_payload(buf, seq), ucmatose::payload_check::match) << size << " " << seq;
    }
  }
}

TEST(ucmatose_payload, another_whole_payload_is_an_echo_not_a_failure) {
  std::vector<std::byte> buf(100);
  ucmatose::fill_payload(buf, 9);  // rdma-core's client echoes the last message it received
  EXPECT_EQ(ucmatose::check_payload(buf, 4), ucmatose::payload_check::foreign);
}

TEST(ucmatose_payload, a_corrupted_byte_is_a_mismatch) {
  std::vector<std::byte> buf(100);
  ucmatose::fill_payload(buf, 3);
  buf[6] ^= std::byte{1};  // the sequence number
  EXPECT_EQ(ucmatose::check_payload(buf, 3), ucmatose::payload_check::mismatch);
  ucmatose::fill_payload(buf, 3);
  buf[50] ^= std::byte{1};
  EXPECT_EQ(ucmatose::check_payload(buf, 3), ucmatose::payload_check::mismatch);
}

TEST(ucmatose_payload, untagged_payload_is_unfilled_not_a_failure) {
  std::vector<std::byte> zeros(100);  // what the original sends from a fresh buffer
  EXPECT_EQ(ucmatose::check_payload(zeros, 0), ucmatose::payload_check::unfilled);
}

TEST(ucmatose_payload, tiny_payloads_are_compared_byte_for_byte) {
  std::vector<std::byte> buf(4);
  ucmatose::fill_payload(buf, 2);
  EXPECT_EQ(ucmatose::check_payload(buf, 2), ucmatose::payload_check::match);
  EXPECT_EQ(ucmatose::check_payload(buf, 3), ucmatose::payload_check::mismatch);
}

TEST(ucmatose_report, steps_summarise_as_statistics) {
  auto r = sample_report();
  auto s = ucmatose::summarize_step(r.connections, ucmatose::step::connect);
  EXPECT_EQ(s.count, 2u);
  EXPECT_DOUBLE_EQ(s.min, 100.0);
  EXPECT_DOUBLE_EQ(s.mean, 150.0);
  EXPECT_DOUBLE_EQ(s.max, 200.0);
  EXPECT_EQ(ucmatose::summarize_step(r.connections, ucmatose::step::destroy).count, 0u);
}

TEST(ucmatose_report, document_has_the_contracts_keys) {
  auto j = render(sample_report());
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"role", "options", "results", "summary"}));
  EXPECT_EQ(j["role"], "client");
}

TEST(ucmatose_report, results_are_connections_with_their_steps) {
  auto j = render(sample_report());
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& c = j["results"][1];
  EXPECT_EQ(c["kind"], "connection");
  EXPECT_EQ(c["index"], 1);
  EXPECT_TRUE(c["ok"].get<bool>());
  EXPECT_TRUE(c["error"].is_null());
  EXPECT_EQ(c["peer"], "10.0.0.1:7471");
  EXPECT_TRUE(c["established"].get<bool>());
  EXPECT_EQ(c["sent"], 10);
  EXPECT_EQ(c["received"], 10);
  EXPECT_EQ(c["expected"], 10);
  EXPECT_EQ(c["lost"], 0);
  EXPECT_EQ(c["verify_errors"], 0);
  EXPECT_EQ(c["unverified"], 0);
  EXPECT_DOUBLE_EQ(c["connect_us"].get<double>(), 200.0);
  EXPECT_TRUE(c["destroy_us"].is_null());  // a step not done (or not timed) is null
  EXPECT_FALSE(c.contains("steps_us"));
}

TEST(ucmatose_report, summary_has_totals_rate_and_a_stats_object_per_step) {
  auto j = render(sample_report());
  const auto& s = j["summary"];
  EXPECT_EQ(s["connections"], 2);
  EXPECT_EQ(s["connections_established"], 2);
  EXPECT_EQ(s["expected"], 20);
  EXPECT_EQ(s["sent"], 20);
  EXPECT_EQ(s["received"], 20);
  EXPECT_EQ(s["lost"], 0);
  EXPECT_EQ(s["verify_errors"], 0);
  EXPECT_EQ(s["unverified"], 0);
  EXPECT_DOUBLE_EQ(s["setup_us"].get<double>(), 4000.0);
  EXPECT_DOUBLE_EQ(s["connections_per_second"].get<double>(), 500.0);
  ASSERT_EQ(s["steps"].size(), ucmatose::step_count);
  EXPECT_EQ(s["steps"]["connect"]["count"], 2);
  EXPECT_DOUBLE_EQ(s["steps"]["connect"]["mean_us"].get<double>(), 150.0);
  EXPECT_DOUBLE_EQ(s["steps"]["connect"]["max_us"].get<double>(), 200.0);
  EXPECT_EQ(s["steps"]["destroy"]["count"], 0);
  EXPECT_TRUE(s["steps"]["destroy"]["p50_us"].is_null());
}

TEST(ucmatose_report, an_untimed_or_failed_setup_has_no_setup_time) {
  ucmatose::report r;
  auto j = render(r);
  EXPECT_TRUE(j["summary"]["setup_us"].is_null());
  EXPECT_TRUE(j["summary"]["connections_per_second"].is_null());
  EXPECT_TRUE(j["results"].empty());
}

TEST(ucmatose_report, a_result_that_failed_says_why) {
  auto r = sample_report();
  r.connections[0].received = 4;
  r.connections[1].established = false;
  r.connections[1].sent = r.connections[1].received = 0;
  r.connections[1].error = "connection: RDMA_CM_EVENT_REJECTED (status 28)";
  auto j = render(r);
  EXPECT_FALSE(j["results"][0]["ok"].get<bool>());
  EXPECT_EQ(j["results"][0]["lost"], 6);
  EXPECT_EQ(j["results"][0]["error"], "6 of 10 messages lost");
  EXPECT_FALSE(j["results"][1]["ok"].get<bool>());
  EXPECT_EQ(j["results"][1]["expected"], 0);  // never connected: expects nothing
  EXPECT_EQ(j["results"][1]["error"], "connection: RDMA_CM_EVENT_REJECTED (status 28)");
  // failed counts the results that are not ok: the established one that
  // lost messages as well as the one never established.
  EXPECT_EQ(j["summary"]["connections_established"], 1);
  EXPECT_EQ(j["summary"]["failed"], 2);
}

TEST(ucmatose_report, judge_reports_loss_with_counts) {
  auto r = sample_report();
  EXPECT_TRUE(ucmatose::judge(r).ok());
  r.connections[1].received = 4;
  auto v = ucmatose::judge(r);
  EXPECT_EQ(v.code, fabric::exit_code::test_failed);
  EXPECT_NE(v.reason.find("20 sent, 14 received, 6 lost"), std::string::npos) << v.reason;
}

TEST(ucmatose_report, judge_fails_the_connection_when_one_was_not_established) {
  auto r = sample_report();
  r.connections[0].established = false;
  r.connections[0].error = "connection: RDMA_CM_EVENT_REJECTED";
  auto v = ucmatose::judge(r);
  EXPECT_EQ(v.code, fabric::exit_code::connect_failed);
  EXPECT_NE(v.reason.find("1 of 2 connections failed: connection: RDMA_CM_EVENT_REJECTED"), std::string::npos)
      << v.reason;
}

TEST(ucmatose_report, judge_names_verification_failures) {
  auto r = sample_report();
  r.connections[0].verify_errors = 3;
  auto v = ucmatose::judge(r);
  EXPECT_EQ(v.code, fabric::exit_code::test_failed);
  EXPECT_EQ(v.reason, "3 of 20 messages failed verification");
}

TEST(ucmatose_report, loss_counts_only_established_connections) {
  auto r = sample_report();
  r.connections.emplace_back();  // never connected: expects nothing
  r.wanted = 3;
  auto j = render(r);
  EXPECT_EQ(j["summary"]["expected"], 20);
  EXPECT_EQ(j["summary"]["lost"], 0);
  EXPECT_FALSE(j["results"][2]["established"].get<bool>());
}

TEST(ucmatose_report, stats_lines_name_the_rate) {
  auto lines = ucmatose::format_stats(sample_report());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "step            conns      min us     mean us      max us");
  EXPECT_EQ(lines[1], "connect             2      100.00      150.00      200.00");
  EXPECT_EQ(lines[2], "connections: 2 established, 0 failed, setup 4.00 ms, 500.0 connections/s");
  EXPECT_EQ(lines[3], "messages: 20 sent, 20 received, 0 lost");
}

TEST(ucmatose_options, no_messages_with_size_zero) {
  ucmatose::options o;
  o.size = 0;
  EXPECT_EQ(o.messages(), 0);
}

TEST(ucmatose_options, json_keys_are_the_long_option_names) {
  CLI::App app;
  ucmatose::options o;
  fabric::cli::add_output_options(app, o.out);
  ucmatose::add_options(app, o);
  auto keys = fabric::cli::option_keys(app);
  auto j = ucmatose::options_json(o);
  EXPECT_EQ(j.size(), keys.size());
  for (const auto& k : keys) EXPECT_TRUE(j.contains(k)) << k;
}

TEST(ucmatose_options, json_is_typed_with_defaults_and_nulls) {
  auto o = parse_options<ucmatose::options>({"-s", "10.0.0.1", "-t", "32", "--verify"});
  ucmatose::validate(o);
  auto j = ucmatose::options_json(o);
  EXPECT_EQ(j["server"], "10.0.0.1");
  EXPECT_TRUE(j["bind"].is_null());
  EXPECT_EQ(j["tos"], 32);
  EXPECT_TRUE(j["ack_timeout"].is_null());
  EXPECT_EQ(j["connections"], 1);
  EXPECT_EQ(j["timeout"], 10000);
  EXPECT_EQ(j["verify"], true);
  EXPECT_EQ(j["port"], 7471);
}

TEST(ucmatose_options, buffers_beyond_the_limit_are_a_usage_error) {
  ucmatose::options o;
  EXPECT_NO_THROW(ucmatose::validate(o));
  o.count = 1 << 20;
  o.size = 1 << 20;
  try {
    ucmatose::validate(o);
    FAIL() << "no usage error";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage);
  }
}

TEST(ucmatose_options, tos_is_read_as_rdma_core_reads_it) {
  EXPECT_EQ(fabric::cli::read_tos("32").value, 32);
  EXPECT_TRUE(fabric::cli::read_tos("32").warning.empty());
  EXPECT_EQ(fabric::cli::read_tos("0x20").value, 32);  // strtoul, base 0
  EXPECT_EQ(fabric::cli::read_tos("255").value, 255);
  auto tcp = fabric::cli::read_tos("tcp");
  EXPECT_EQ(tcp.value, 0);
  EXPECT_NE(tcp.warning.find("not a number"), std::string::npos) << tcp.warning;
  auto partly = fabric::cli::read_tos("32abc");
  EXPECT_EQ(partly.value, 32);
  EXPECT_FALSE(partly.warning.empty());
  EXPECT_THROW(fabric::cli::read_tos("256"), fabric::error);
  EXPECT_THROW(fabric::cli::read_tos("-1"), fabric::error);
}

TEST(ucmatose_options, tos_is_read_once_with_a_warning_and_timing_follows_the_output) {
  auto o = parse_options<ucmatose::options>({"-s", "x", "-t", "tcp"});
  EXPECT_NO_THROW(ucmatose::validate(o));
  ASSERT_TRUE(o.tos.has_value());
  EXPECT_EQ(*o.tos, 0);
  ASSERT_EQ(o.warnings.size(), 1u);
  EXPECT_FALSE(o.timed());  // human output without --stats: the clock is not read
  EXPECT_TRUE([] {
    auto j = parse_options<ucmatose::options>({"-s", "x", "-j"});
    ucmatose::validate(j);
    return j.timed();
  }());
  EXPECT_TRUE([] {
    auto s = parse_options<ucmatose::options>({"-s", "x", "--stats"});
    ucmatose::validate(s);
    return s.timed() && !s.tos;
  }());
}

namespace {
std::int64_t fake_ms = 0;
std::int64_t fake_clock() { return fake_ms; }
}  // namespace

TEST(ucmatose_timer, a_phase_ends_after_the_limit_without_progress) {
  fake_ms = 1000;
  fabric::progress_timer t(std::chrono::milliseconds(3000), fake_clock);
  EXPECT_EQ(t.next_wait(false), 3000);
  fake_ms = 2000;
  EXPECT_EQ(t.next_wait(true), 3000);  // progress restarts the limit
  fake_ms = 4500;
  EXPECT_EQ(t.next_wait(false), 500);
  fake_ms = 5000;
  EXPECT_EQ(t.next_wait(false), 0);
}

TEST(ucmatose_timer, events_that_are_not_progress_cannot_keep_a_phase_alive) {
  // A flood of refused connection requests: a wake-up every 10 ms, none of
  // them progress. The phase still ends at the limit.
  fake_ms = 0;
  fabric::progress_timer t(std::chrono::milliseconds(3000), fake_clock);
  int wakeups = 0;
  while (t.next_wait(false) > 0) {
    fake_ms += 10;
    ++wakeups;
  }
  EXPECT_EQ(fake_ms, 3000);
  EXPECT_EQ(wakeups, 300);
}

TEST(ucmatose_timer, the_coarse_clock_moves_forward) {
  auto a = fabric::progress_timer::coarse_now_ms();
  EXPECT_GT(a, 0);
  EXPECT_GE(fabric::progress_timer::coarse_now_ms(), a);
}
