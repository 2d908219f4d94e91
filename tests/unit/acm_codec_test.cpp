#include "fabric/acm/acm_codec.hpp"
#include "fabric/base/error.hpp"
#include "fabric/cli/range.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace fabric::acm;

namespace {

path_record sample_path() {
  path_record p;
  p.dgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 0xc9, 3, 0, 0, 0, 6};
  p.sgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 0xc9, 3, 0, 0, 0, 1};
  p.dlid = 6;
  p.slid = 1;
  p.flow_label = 0x12345;
  p.hop_limit = 64;
  p.tclass = 3;
  p.reversible = true;
  p.numb_path = 1;
  p.pkey = 0xffff;
  p.qos_class = 0x123;
  p.sl = 5;
  p.mtu_selector = 2;
  p.mtu = 4;
  p.rate_selector = 2;
  p.rate = 7;
  p.packet_life_time_selector = 2;
  p.packet_life_time = 18;
  p.preference = 1;
  return p;
}

/// A RESOLVE reply as ibacmp sends it: header in host order, no ACK bit.
std::vector<std::uint8_t> resolve_reply_bytes(std::uint64_t tid, std::uint8_t op, std::uint8_t status,
                                              const std::vector<endpoint>& entries) {
  auto msg = encode_resolve(tid, entries.empty() ? std::vector<endpoint>{endpoint{}} : entries);
  if (entries.empty()) msg.resize(header_size);
  std::uint16_t len = static_cast<std::uint16_t>(msg.size());
  std::memcpy(msg.data() + 6, &len, 2);
  msg[1] = op;
  msg[2] = status;
  return msg;
}

void expect_protocol_error(auto&& fn) {
  try {
    fn();
    FAIL() << "no error";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::protocol) << e.what();
  }
}

}  // namespace

TEST(AcmCodec, PathRoundTripsAndMatchesTheWireLayout) {
  auto p = sample_path();
  auto raw = encode_path(p);
  EXPECT_EQ(raw[40], 0);
  EXPECT_EQ(raw[41], 6);  // dlid big-endian
  EXPECT_EQ(raw[44], 0x01);
  EXPECT_EQ(raw[45], 0x23);
  EXPECT_EQ(raw[46], 0x45);
  EXPECT_EQ(raw[47], 64);   // flow label 27:8, hop limit 7:0
  EXPECT_EQ(raw[49], 0x81); // reversible, one path
  EXPECT_EQ(raw[52], 0x12);
  EXPECT_EQ(raw[53], 0x35); // qos class 15:4, sl 3:0
  EXPECT_EQ(raw[54], 0x84);
  EXPECT_EQ(decode_path(raw), p);
}

TEST(AcmCodec, ResolveRequestLayout) {
  std::uint8_t ip[4] = {10, 0, 0, 5};
  std::vector<endpoint> e{endpoint::address(ip, flag_dest | flag_nodelay)};
  auto msg = encode_resolve(42, e);
  ASSERT_EQ(msg.size(), 16u + 72u);
  EXPECT_EQ(msg[0], 1);
  EXPECT_EQ(msg[1], 1);
  std::uint16_t len;
  std::memcpy(&len, msg.data() + 6, 2);
  EXPECT_EQ(len, 88);  // host order
  std::uint32_t flags;
  std::memcpy(&flags, msg.data() + 16, 4);
  EXPECT_EQ(flags, flag_dest | flag_nodelay);
  std::uint16_t type;
  std::memcpy(&type, msg.data() + 20, 2);
  EXPECT_EQ(type, 2);
  EXPECT_EQ(msg[24], 10);
  EXPECT_EQ(msg[27], 5);
}

TEST(AcmCodec, PerfAndEpRequestsUseBigEndianLength) {
  auto perf = encode_perf_query(7, 3);
  EXPECT_EQ(perf.size(), 16u);
  EXPECT_EQ(perf[6], 0);
  EXPECT_EQ(perf[7], 16);
  EXPECT_EQ(perf[4], 3);
  auto ep = encode_ep_query(7, 2, 1);
  EXPECT_EQ(ep[3], 2);
  EXPECT_EQ(ep[4], 1);
  EXPECT_EQ(ep[7], 16);
  auto by_addr = encode_perf_query(7, endpoint::name("host", flag_source));
  EXPECT_EQ(by_addr[6], 0);
  EXPECT_EQ(by_addr[7], 88);
}

TEST(AcmCodec, DecodesAResolveReplyWithAndWithoutAck) {
  std::uint8_t src[4] = {10, 0, 0, 1};
  std::vector<endpoint> e{endpoint::path(sample_path(), 0x2b), endpoint::address(src, flag_source)};
  for (int op_value : {0x01, 0x81}) {
    auto op = static_cast<std::uint8_t>(op_value);
    auto r = decode_resolve_reply(resolve_reply_bytes(9, op, 0, e), 9);
    ASSERT_EQ(r.paths.size(), 1u);
    EXPECT_EQ(r.paths[0].as_path(), sample_path());
    ASSERT_EQ(r.sources.size(), 1u);
    EXPECT_EQ(r.sources[0].text(), "10.0.0.1");
  }
}

TEST(AcmCodec, AnErrorStatusNeedsNoEntries) {
  auto r = decode_resolve_reply(resolve_reply_bytes(9, 0x81, 3, {}), 9);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(status_name(r.status), "ENODATA");
  EXPECT_EQ(status_errno(r.status), ENODATA);
  EXPECT_EQ(status_errno(7), EADDRNOTAVAIL);
}

TEST(AcmCodec, RejectsMalformedResolveReplies) {
  std::vector<endpoint> e{endpoint::path(sample_path(), 0)};
  auto good = resolve_reply_bytes(5, 0x01, 0, e);
  expect_protocol_error([&] { decode_resolve_reply(good, 6); });  // tid
  auto bad = good;
  bad[0] = 2;
  expect_protocol_error([&] { decode_resolve_reply(bad, 5); });  // version
  bad = good;
  bad[1] = 0x82;
  expect_protocol_error([&] { decode_resolve_reply(bad, 5); });  // opcode
  bad = good;
  bad.pop_back();
  expect_protocol_error([&] { decode_resolve_reply(bad, 5); });  // length field vs bytes
  expect_protocol_error([&] { decode_resolve_reply(std::span(good.data(), 10), 5); });  // shorter than a header
  auto nopath = resolve_reply_bytes(5, 0x01, 0, {});
  expect_protocol_error([&] { decode_resolve_reply(nopath, 5); });
  std::uint8_t ip[4] = {1, 2, 3, 4};
  auto nosrc = resolve_reply_bytes(5, 0x01, 0, {endpoint::address(ip, flag_dest)});
  expect_protocol_error([&] { decode_resolve_reply(nosrc, 5); });  // neither path nor source
}

TEST(AcmCodec, PerfReply) {
  std::vector<std::uint8_t> msg(16 + 7 * 8, 0);
  msg[0] = 1;
  msg[1] = 0x82;
  msg[3] = 7;
  msg[7] = static_cast<std::uint8_t>(msg.size());
  std::uint64_t tid = 77;
  std::memcpy(msg.data() + 8, &tid, 8);
  msg[16 + 8 + 7] = 42;  // Resolve Count
  auto r = decode_perf_reply(msg, 77);
  ASSERT_EQ(r.counters.size(), 7u);
  EXPECT_EQ(r.counters[1], 42u);
  EXPECT_EQ(counter_name(1), "Resolve Count");
  EXPECT_EQ(counter_name(7), "Unknown");
  msg[3] = 8;  // more counters announced than sent
  expect_protocol_error([&] { decode_perf_reply(msg, 77); });
}

TEST(AcmCodec, EpReply) {
  std::vector<std::uint8_t> msg(16 + 80 + 2 * 64, 0);
  msg[0] = 1;
  msg[1] = 0x83;
  msg[6] = 0;
  msg[7] = static_cast<std::uint8_t>(msg.size());
  std::uint64_t tid = 3;
  std::memcpy(msg.data() + 8, &tid, 8);
  auto* p = msg.data() + 16;
  p[7] = 0xef;
  p[8] = 1;
  p[9] = 2;
  p[12] = 0xff;
  p[13] = 0xff;
  p[15] = 2;
  std::memcpy(p + 16, "ibacmp", 6);
  std::memcpy(p + 80, "10.0.0.1", 8);
  std::memset(p + 144, 'x', 64);  // no NUL: bounded by the 64 bytes
  auto r = decode_ep_reply(msg, 3);
  EXPECT_EQ(r.dev_guid, 0xefu);
  EXPECT_EQ(r.pkey, 0xffff);
  EXPECT_EQ(r.prov_name, "ibacmp");
  ASSERT_EQ(r.addrs.size(), 2u);
  EXPECT_EQ(r.addrs[0], "10.0.0.1");
  EXPECT_EQ(r.addrs[1], std::string(64, 'x'));
  p[15] = 3;
  expect_protocol_error([&] { decode_ep_reply(msg, 3); });
}

TEST(AcmCodec, NamesLongerThan63AreRefused) {
  EXPECT_THROW(endpoint::name(std::string(64, 'a'), 0), std::length_error);
  EXPECT_EQ(endpoint::name(std::string(63, 'a'), 0).text(), std::string(63, 'a'));
}

TEST(Range, ExpandsLikeTheOriginal) {
  using V = std::vector<std::string>;
  EXPECT_EQ(fabric::expand_range("node1"), V{"node1"});
  EXPECT_EQ(fabric::expand_range("node[1-3,5]"), (V{"node1", "node2", "node3", "node5"}));
  EXPECT_EQ(fabric::expand_range("node[08-10]"), (V{"node08", "node09", "node10"}));
  EXPECT_EQ(fabric::expand_range("n[1-10]").size(), 10u);
  EXPECT_EQ(fabric::expand_range("[1-2]"), (V{"1", "2"}));
  EXPECT_EQ(fabric::expand_range("10.0.0.[1-2]"), (V{"10.0.0.1", "10.0.0.2"}));
  EXPECT_EQ(fabric::expand_range("h[1,,3]"), (V{"h1", "h3"}));
  EXPECT_EQ(fabric::expand_range("h[]"), V{"h"});
  EXPECT_EQ(fabric::expand_range("h[2]x"), V{"h2"});
}

TEST(Range, RejectsWhatIsNotARange) {
  EXPECT_THROW(fabric::expand_range("h[a-b]"), fabric::error);
  EXPECT_THROW(fabric::expand_range("h[3-1]"), fabric::error);
  EXPECT_THROW(fabric::expand_range("h[0-99999999]"), fabric::error);
}

TEST(acm_codec, every_counter_has_its_own_json_key) {
  EXPECT_EQ(fabric::acm::counter_key(0), "error_count");
  EXPECT_EQ(fabric::acm::counter_key(6), "route_cache_count");
  EXPECT_EQ(fabric::acm::counter_key(7), "counter_7");
  EXPECT_NE(fabric::acm::counter_key(8), fabric::acm::counter_key(9));
}
