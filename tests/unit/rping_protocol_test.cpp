#include "protocol.hpp"
#include "rping.hpp"

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
  rping::report r;
  r.role = "client";
  r.opt.client = true;
  r.opt.addr = "10.0.0.1";
  auto& c = r.connections.emplace_back();
  c.pings = 3;
  c.rtt_us = {10, 20, 30};
  nlohmann::json j;
  rping::to_json(j, r);
  EXPECT_EQ(j["role"], "client");
  EXPECT_EQ(j["pings"], 3);
  EXPECT_EQ(j["verify_failures"], 0);
  EXPECT_EQ(j["options"]["addr"], "10.0.0.1");
  EXPECT_EQ(j["latency_us"]["min"], 10.0);
  EXPECT_EQ(j["latency_us"]["max"], 30.0);
  for (const char* k : {"p50", "p99", "p999", "mean", "stdev"}) EXPECT_TRUE(j["latency_us"].contains(k)) << k;
}

TEST(rping_report, no_samples_gives_null_latencies) {
  rping::report r;
  nlohmann::json j;
  rping::to_json(j, r);
  EXPECT_TRUE(j["latency_us"]["p50"].is_null());
}
