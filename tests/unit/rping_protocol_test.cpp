#include "rping/protocol.hpp"
#include "rping/rping.hpp"

#include "parse_options.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace {
std::string text_of(const std::vector<std::byte>& buf) { return std::string(rping::ping_text(buf)); }
}  // namespace

TEST(rping_protocol, info_is_16_big_endian_bytes) {
  rping::buffer_info info{0x0102030405060708ULL, 0x0a0b0c0d, 0x11223344};
  auto bytes = rping::encode(info);
  const unsigned char want[16] = {1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d, 0x11, 0x22, 0x33, 0x44};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(static_cast<unsigned char>(bytes[i]), want[i]) << i;
  EXPECT_EQ(rping::decode(bytes), info);
}

TEST(rping_protocol, decode_rejects_other_lengths) {
  std::vector<std::byte> short_msg(15), long_msg(17);
  EXPECT_FALSE(rping::decode(short_msg));
  EXPECT_FALSE(rping::decode(long_msg));
  EXPECT_FALSE(rping::decode({}));
}

TEST(rping_protocol, ping_zero_at_64_bytes_matches_the_original) {
  std::vector<std::byte> buf(64);
  rping::fill_ping(buf, 0);
  EXPECT_EQ(text_of(buf), "rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr");
  EXPECT_EQ(buf.back(), std::byte{0});
}

TEST(rping_protocol, letters_start_one_further_each_ping_and_wrap) {
  std::vector<std::byte> buf(23);
  rping::fill_ping(buf, 1);
  EXPECT_EQ(text_of(buf), "rdma-ping-1: BCDEFGHIJ");
  rping::fill_ping(buf, 57);  // starts at 'z'
  EXPECT_EQ(text_of(buf), "rdma-ping-57: zABCDEFG");
  rping::fill_ping(buf, 58);  // back to 'A'
  EXPECT_EQ(text_of(buf), "rdma-ping-58: ABCDEFGH");
}

TEST(rping_protocol, smallest_size_holds_the_longest_prefix) {
  std::vector<std::byte> buf(rping::min_size);
  rping::fill_ping(buf, 2147483647);
  EXPECT_EQ(text_of(buf), "rdma-ping-2147483647: ");
}

TEST(rping_protocol, ping_text_never_reads_past_the_buffer) {
  std::vector<std::byte> buf(8, std::byte{'x'});  // no NUL at all
  EXPECT_EQ(rping::ping_text(buf).size(), 8u);
}

TEST(rping_report, json_has_the_documented_fields) {
  rping::options o;
  o.client = true;
  o.addr = "10.0.0.1";
  rping::report r;
  r.role = "client";
  auto& c = r.connections.emplace_back();
  c.peer = "10.0.0.1:7174";
  c.pings = 3;
  for (double v : {10.0, 20.0, 30.0}) c.rtt.add(v);
  nlohmann::json j;
  rping::to_json(j, o, r);
  EXPECT_EQ(j["role"], "client");
  EXPECT_EQ(j["summary"]["pings"], 3);
  EXPECT_EQ(j["summary"]["verify_errors"], 0);
  EXPECT_EQ(j["options"]["addr"], "10.0.0.1");
  EXPECT_TRUE(j["options"]["source"].is_null());
  EXPECT_EQ(j["summary"]["rtt"]["min_us"], 10.0);
  EXPECT_EQ(j["summary"]["rtt"]["max_us"], 30.0);
  const auto& item = j["results"].at(0);
  EXPECT_EQ(item["kind"], "connection");
  EXPECT_EQ(item["index"], 0);
  EXPECT_EQ(item["ok"], true);
  EXPECT_TRUE(item["error"].is_null());
  EXPECT_EQ(item["rtt"]["count"], 3);
}

TEST(rping_report, a_failed_connection_says_why) {
  rping::report r;
  auto& c = r.connections.emplace_back();
  c.error = "server 10.0.0.1:7174 disconnected after 2 pings";
  nlohmann::json j;
  rping::to_json(j, rping::options{}, r);
  EXPECT_EQ(j["results"][0]["ok"], false);
  EXPECT_EQ(j["results"][0]["error"], c.error);
  EXPECT_EQ(j["summary"]["failed"], 1);
}

TEST(rping_report, no_samples_gives_null_latencies) {
  nlohmann::json j;
  rping::to_json(j, rping::options{}, rping::report{});
  EXPECT_EQ(j["summary"]["rtt"]["count"], 0);
  EXPECT_TRUE(j["summary"]["rtt"]["p50_us"].is_null());
}

TEST(rping_options, json_keys_are_the_long_option_names) {
  CLI::App app;
  rping::options o;
  fabric::cli::add_output_options(app, o.out);
  rping::add_options(app, o);
  auto keys = fabric::cli::option_keys(app);
  auto j = rping::options_json(o);
  EXPECT_EQ(j.size(), keys.size());
  // The flags --server and --client add _mode: `server` is an address or a
  // host, `client` a host, in the other tools' documents.
  for (auto k : keys) {
    if (k == "server" || k == "client") k += "_mode";
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_FALSE(j.contains("server"));
  EXPECT_FALSE(j.contains("client"));
  EXPECT_TRUE(j["server_mode"].is_boolean());
  EXPECT_TRUE(j["client_mode"].is_boolean());
}

TEST(rping_options, retry_takes_a_value_after_a_space_or_none) {
  EXPECT_EQ(parse_options<rping::options>({"-c", "-a", "x", "--retry", "5000"}).retry_ms, 5000);
  EXPECT_EQ(parse_options<rping::options>({"-c", "-a", "x", "--retry=7"}).retry_ms, 7);
  EXPECT_EQ(parse_options<rping::options>({"-c", "-a", "x", "--retry"}).retry_ms, rping::default_retry_ms);
  EXPECT_THROW(parse_options<rping::options>({"-c", "--retry", "-5"}), CLI::ParseError);
  EXPECT_THROW(parse_options<rping::options>({"-c", "--retry", "99999999999"}), CLI::ParseError);
}

TEST(rping_options, the_last_of_server_and_client_chooses_the_side_as_the_original_does) {
  auto o = parse_options<rping::options>({"-s", "-a", "x", "-c"});
  EXPECT_TRUE(o.client);
  EXPECT_FALSE(o.server);
  o = parse_options<rping::options>({"-c", "-s"});
  EXPECT_TRUE(o.server);
  EXPECT_FALSE(o.client);
  o = parse_options<rping::options>({"-sc"});
  EXPECT_TRUE(o.client);
  EXPECT_FALSE(o.server);
}

TEST(rping_options, negative_and_oversized_numbers_are_refused) {
  EXPECT_THROW(parse_options<rping::options>({"-c", "-C", "-1"}), CLI::ParseError);
  EXPECT_THROW(parse_options<rping::options>({"-c", "-p", "70000"}), CLI::ParseError);
  EXPECT_THROW(parse_options<rping::options>({"-c", "-S", "65536"}), CLI::ParseError);
}
