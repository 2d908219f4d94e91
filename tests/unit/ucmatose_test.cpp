#include "payload.hpp"
#include "ucmatose.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

namespace {

ucmatose::report sample_report() {
  ucmatose::report r;
  r.role = "client";
  r.opt.server = "10.0.0.1";
  r.opt.connections = 2;
  r.opt.count = 10;
  r.setup_ms = 4.0;
  for (int i = 0; i < 2; ++i) {
    auto& c = r.connections.emplace_back();
    c.established = true;
    c.sent = 10;
    c.received = 10;
    c.step_us[static_cast<std::size_t>(ucmatose::step::connect)] = 100.0 * (i + 1);
  }
  return r;
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

TEST(ucmatose_report, steps_summarise_min_mean_max) {
  auto r = sample_report();
  auto s = ucmatose::summarize_step(r.connections, ucmatose::step::connect);
  EXPECT_EQ(s.count, 2u);
  EXPECT_DOUBLE_EQ(s.min, 100.0);
  EXPECT_DOUBLE_EQ(s.mean, 150.0);
  EXPECT_DOUBLE_EQ(s.max, 200.0);
  EXPECT_EQ(ucmatose::summarize_step(r.connections, ucmatose::step::destroy).count, 0u);
}

TEST(ucmatose_report, json_has_counts_steps_and_connections) {
  auto r = sample_report();
  nlohmann::json j;
  ucmatose::to_json(j, r);
  EXPECT_EQ(j["role"], "client");
  EXPECT_EQ(j["counts"]["connected"], 2);
  EXPECT_EQ(j["counts"]["connections"], 2);
  EXPECT_EQ(j["counts"]["expected"], 20);
  EXPECT_EQ(j["counts"]["lost"], 0);
  EXPECT_EQ(j["steps_us"]["connect"]["samples"], 2);
  EXPECT_TRUE(j["connections"][1]["connected"].get<bool>());
  EXPECT_DOUBLE_EQ(j["connections_per_second"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(j["steps_us"]["connect"]["mean"].get<double>(), 150.0);
  EXPECT_FALSE(j["steps_us"].contains("destroy"));  // absent data is left out
  ASSERT_EQ(j["connections"].size(), 2u);
  EXPECT_TRUE(j["connections"][0]["error"].is_null());
  EXPECT_EQ(j["options"]["server"], "10.0.0.1");
  EXPECT_FALSE(j["options"].contains("tos"));
}

TEST(ucmatose_report, verdict_reports_loss_with_counts) {
  auto r = sample_report();
  std::string why;
  EXPECT_EQ(ucmatose::verdict(r, why), fabric::exit_code::ok);
  r.connections[1].received = 4;
  EXPECT_EQ(ucmatose::verdict(r, why), fabric::exit_code::test_failed);
  EXPECT_NE(why.find("20 sent, 14 received, 6 lost"), std::string::npos) << why;
}

TEST(ucmatose_report, verdict_fails_the_connection_when_one_was_not_established) {
  auto r = sample_report();
  r.connections[0].established = false;
  r.connections[0].error = "connection: RDMA_CM_EVENT_REJECTED";
  std::string why;
  EXPECT_EQ(ucmatose::verdict(r, why), fabric::exit_code::connect_failed);
  EXPECT_NE(why.find("1 of 2 connections failed: connection: RDMA_CM_EVENT_REJECTED"), std::string::npos) << why;
}

TEST(ucmatose_report, loss_counts_only_connected_connections) {
  auto r = sample_report();
  r.connections.emplace_back();  // never connected: expects nothing
  r.opt.connections = 3;
  nlohmann::json j;
  ucmatose::to_json(j, r);
  EXPECT_EQ(j["counts"]["expected"], 20);
  EXPECT_EQ(j["counts"]["lost"], 0);
  EXPECT_FALSE(j["connections"][2]["connected"].get<bool>());
}

TEST(ucmatose_report, no_messages_with_size_zero) {
  ucmatose::options o;
  o.size = 0;
  EXPECT_EQ(o.messages(), 0);
}

TEST(ucmatose_options, buffers_beyond_the_limit_are_a_usage_error) {
  ucmatose::options o;
  EXPECT_NO_THROW(ucmatose::validate(o));
  o.count = 1 << 20;
  o.size = 1 << 20;
  EXPECT_THROW(ucmatose::validate(o), fabric::error);
}
TEST(ucmatose_report, stats_lines_name_the_rate) {
  auto lines = ucmatose::format_stats(sample_report());
  ASSERT_GE(lines.size(), 3u);
  EXPECT_NE(lines.back().find("20 sent, 20 received, 0 lost"), std::string::npos);
  bool rate = false;
  for (const auto& l : lines) rate |= l.find("500.0 connections/s") != std::string::npos;
  EXPECT_TRUE(rate);
}
