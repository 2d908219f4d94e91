// The bandwidth check's connection data: what the client asks, what the
// server answers, and each writer's closing figures; a peer's lies refused.
#include "fabric/flows/rc_bandwidth.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

namespace wire = fabric::bandwidth_wire;

TEST(rc_bandwidth_wire, a_request_and_a_reply_read_back_padding_and_all) {
  wire::hello h;
  h.bidirectional = false;
  h.addr = 0x00007f0012345000;
  h.rkey = 0xabcdef01;
  h.size = 1 << 20;
  h.count = 0;
  h.duration_ms = 1500;
  auto bytes = wire::encode_request(h);
  // The provider may hand the private data on padded with zeros.
  std::vector<std::byte> padded(bytes.begin(), bytes.end());
  padded.resize(56);
  auto back = wire::decode_request(padded);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->bidirectional);
  EXPECT_EQ(back->addr, h.addr);
  EXPECT_EQ(back->rkey, h.rkey);
  EXPECT_EQ(back->size, h.size);
  EXPECT_EQ(back->duration_ms, 1500u);

  auto reply = wire::decode_reply(wire::encode_reply(h));
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->size, h.size);
  EXPECT_FALSE(wire::decode_request(wire::encode_reply(h))) << "a reply is not a request";
}

TEST(rc_bandwidth_wire, requests_out_of_the_plans_limits_are_refused) {
  wire::hello h;
  h.size = 1 << 20;
  h.duration_ms = 1000;
  auto good = wire::encode_request(h);
  auto with = [&](std::size_t at, std::uint8_t value) {
    auto b = good;
    b[at] = std::byte{value};
    return wire::decode_request(b);
  };
  EXPECT_TRUE(wire::decode_request(good));
  EXPECT_FALSE(with(0, 'X')) << "not our mark";
  EXPECT_FALSE(with(4, 2)) << "another version";
  EXPECT_FALSE(with(5, 0x82)) << "an unknown flag";
  EXPECT_FALSE(with(20, 0x7f)) << "a write of 2 GiB";
  EXPECT_FALSE(wire::decode_request(std::span(good).first(35))) << "short";
  h.size = 0;
  EXPECT_FALSE(wire::decode_request(wire::encode_request(h))) << "no bytes a write";
  h.size = 64;
  h.duration_ms = 0;
  EXPECT_FALSE(wire::decode_request(wire::encode_request(h))) << "neither a count nor a time";
  h.count = fabric::max_write_count + 1;
  EXPECT_FALSE(wire::decode_request(wire::encode_request(h))) << "too many writes";
}

TEST(rc_bandwidth_wire, a_writers_figures_read_back_and_impossible_ones_are_refused) {
  fabric::transfer t{125'000'000, 0.5};
  auto back = wire::decode_done(wire::encode_done(t));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->bytes, t.bytes);
  EXPECT_DOUBLE_EQ(back->seconds, 0.5);
  EXPECT_DOUBLE_EQ(back->gbps(), 2.0);
  auto none = wire::decode_done(wire::encode_done({}));
  ASSERT_TRUE(none) << "a side that did not write says 0 bytes in 0 s";
  EXPECT_EQ(none->bytes, 0u);
  EXPECT_FALSE(wire::decode_done(wire::encode_done({100, 0}))) << "bytes in no time";
  EXPECT_FALSE(wire::decode_done(wire::encode_done({0, 1}))) << "time without bytes";
  auto bytes = wire::encode_done(t);
  EXPECT_FALSE(wire::decode_done(std::span(bytes).first(15)));
  EXPECT_DOUBLE_EQ(fabric::transfer{}.gbps(), 0);
}

TEST(rc_bandwidth, writes_in_flight_keep_the_pipe_full_and_drain_soon) {
  // A link whose rate is not known: 4 MiB.
  EXPECT_EQ(fabric::writes_in_flight(4096), fabric::max_writes_in_flight);
  EXPECT_EQ(fabric::writes_in_flight(std::uint64_t{512} << 10), 8u);
  EXPECT_EQ(fabric::writes_in_flight(std::uint64_t{1} << 20), 4u) << "4 MiB of 1 MiB writes at most";
  EXPECT_EQ(fabric::writes_in_flight(std::uint64_t{3} << 20), 2u) << "never fewer than two";
  EXPECT_EQ(fabric::writes_in_flight(fabric::max_write_bytes), 2u);
  // A 400 Gb/s rail 5 us across its fabric: 8 MiB, its round trip's bytes
  // (250 KB) and the completions' handling.
  constexpr std::uint64_t mib = std::uint64_t{1} << 20;
  EXPECT_EQ(fabric::writes_in_flight(mib, 400, 5), 8u);
  EXPECT_EQ(fabric::writes_in_flight(64 << 10, 400, 5), fabric::max_writes_in_flight) << "the send queue's most";
  // A round trip of 1 ms (between sites): twice its 50 MB, the queue's most.
  EXPECT_EQ(fabric::writes_in_flight(mib, 400, 1000), fabric::max_writes_in_flight);
  EXPECT_EQ(fabric::writes_in_flight(16 * mib, 400, 1000), 6u) << "100 MB of 16 MiB writes";
  // Soft-RoCE on a virtio NIC, 2.5 Gb/s: what it carries in 4 ms, 1.25 MB.
  EXPECT_EQ(fabric::writes_in_flight(mib, 2.5, 50), 2u);
  EXPECT_EQ(fabric::writes_in_flight(256 << 10, 2.5, 50), 5u);
  EXPECT_EQ(fabric::writes_in_flight(4096, 10, 5), fabric::max_writes_in_flight);
}

}  // namespace
