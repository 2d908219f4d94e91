#include "fabric/cm/ud.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace fabric;

namespace {
port_info rxe_port() {
  port_info p;
  p.device = "rxe0";
  p.port = 1;
  p.link_layer = IBV_LINK_LAYER_ETHERNET;
  p.active_mtu = 1024;
  p.path_mtu = 1024;
  p.max_qp_wr = 1 << 20;
  p.max_cqe = 32767;
  return p;
}
}  // namespace

TEST(ud, mtu_enum_to_bytes) {
  EXPECT_EQ(mtu_bytes(IBV_MTU_256), 256U);
  EXPECT_EQ(mtu_bytes(IBV_MTU_1024), 1024U);
  EXPECT_EQ(mtu_bytes(IBV_MTU_4096), 4096U);
}

TEST(ud, grh_room_is_40_bytes) { EXPECT_EQ(grh_bytes, 40U); }

TEST(ud, rdma_cm_udp_qkey) { EXPECT_EQ(udp_qkey, 0x01234567U); }

TEST(ud, link_layer_names) {
  EXPECT_EQ(link_layer_name(IBV_LINK_LAYER_INFINIBAND), "InfiniBand");
  EXPECT_EQ(link_layer_name(IBV_LINK_LAYER_ETHERNET), "Ethernet");
}

TEST(ud, size_up_to_the_path_mtu_fits) {
  EXPECT_FALSE(ud_size_problem(1024, rxe_port()).has_value());
  EXPECT_FALSE(ud_size_problem(0, rxe_port()).has_value());
}

TEST(ud, oversize_names_the_mtu_and_port) {
  auto problem = ud_size_problem(1025, rxe_port());
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem, "message size 1025 is larger than the path MTU 1024 of rxe0 port 1");
  try {
    check_ud_size(2000, rxe_port());
    FAIL() << "no error";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), exit_code::no_device);
  }
}

TEST(ud, depths_follow_the_count_within_device_limits) {
  ud_config cfg;
  auto a = clamp_depths(cfg, 10, rxe_port());
  EXPECT_EQ(a.send_depth, 10U);
  EXPECT_EQ(a.recv_depth, 10U);
  auto b = clamp_depths(cfg, 0, rxe_port());
  EXPECT_EQ(b.send_depth, 1U);
  auto c = clamp_depths(cfg, 1'000'000, rxe_port());
  EXPECT_EQ(c.send_depth, max_send_depth);  // send slots are reused as sends complete
  EXPECT_EQ(c.recv_depth, 16383U);          // the shared CQ holds both queues
}

TEST(ud_buffers, receives_hold_the_port_mtu_whatever_the_size) {
  EXPECT_EQ(spill_bytes(64, 1024), 960U);
  EXPECT_EQ(spill_bytes(1024, 1024), 0U);
  EXPECT_EQ(spill_bytes(2000, 1024), 0U);
  EXPECT_EQ(spill_bytes(0, 4096), 4096U);
  EXPECT_EQ(spill_bytes(100, 0), largest_mtu - 100);  // an MTU the port does not name: the largest
}

TEST(ud_buffers, a_datagram_longer_than_the_size_is_oversize) {
  EXPECT_FALSE(oversize(40 + 64, 64));
  EXPECT_FALSE(oversize(40 + 10, 64));  // shorter: --verify's business
  EXPECT_TRUE(oversize(40 + 65, 64));
  EXPECT_TRUE(oversize(40 + 1024, 0));
}

TEST(ud_buffers, the_budget_counts_the_spill_area) {
  fabric::ud_config cfg;
  cfg.size = 0;
  cfg.send_depth = cfg.recv_depth = 1;
  // 40 bytes of receive slot and 4096 of spill: 1 GiB holds 259608 such QPs, not 26843545.
  EXPECT_NO_THROW(fabric::check_buffer_budget(cfg, 259'000));
  EXPECT_THROW(fabric::check_buffer_budget(cfg, 260'000), fabric::error);
}

TEST(ud_buffers, payloads_not_kept_cost_only_their_grh_per_receive) {
  fabric::ud_config cfg;
  cfg.size = 1000;
  cfg.recv_depth = 16383;
  cfg.send_depth = fabric::max_send_depth;
  EXPECT_EQ(fabric::ud_layout::of(cfg, 24).bytes, 16383U * 1040 + 256 * 1000 + 24);
  EXPECT_THROW(fabric::check_buffer_budget(cfg, 64), fabric::error);  // 1.1 GiB
  cfg.keep_payloads = false;
  auto l = fabric::ud_layout::of(cfg, 24);
  EXPECT_EQ(l.bytes, 16383U * 40 + 256 * 1000 + 1000 + 24);
  // The receives' GRH slots, then the send slots, then what the receives share.
  EXPECT_EQ(l.recv_stride, 40U);
  EXPECT_EQ(l.send_at, 16383U * 40);
  EXPECT_EQ(l.shared_at, l.send_at + 256 * 1000);
  EXPECT_EQ(l.shared, 1000U + 24);
  EXPECT_NO_THROW(fabric::check_buffer_budget(cfg, 64));  // 58 MiB
}

TEST(ud_buffers, a_run_above_the_buffer_limit_is_a_usage_error) {
  fabric::ud_config cfg;
  cfg.size = 1000;
  cfg.send_depth = cfg.recv_depth = 16384;  // rxe's deepest queue
  EXPECT_NO_THROW(fabric::check_buffer_budget(cfg, 4));
  try {
    fabric::check_buffer_budget(cfg, 64);  // 2 GiB
    FAIL() << "64 QPs of 32768 slots of 1040 bytes passed";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage);
    EXPECT_NE(std::string(e.what()).find("lower -c, -C or -S"), std::string::npos) << e.what();
  }
  // No overflow at the extremes of -c and -S.
  cfg.size = 1 << 20;
  cfg.send_depth = cfg.recv_depth = 1u << 30;
  EXPECT_THROW(fabric::check_buffer_budget(cfg, 65536), fabric::error);
}

TEST(ud_source, only_the_peer_host_and_then_its_qp_are_accepted) {
  sockaddr_in peer{};
  peer.sin_family = AF_INET;
  peer.sin_addr.s_addr = htonl(0x0a000102);  // 10.0.1.2
  auto gid = fabric::roce_gid_of(reinterpret_cast<sockaddr*>(&peer));
  ASSERT_TRUE(gid);
  EXPECT_EQ(gid->raw[10], 0xff);
  EXPECT_EQ(gid->raw[15], 2);
  ibv_grh grh{};
  grh.version_tclass_flow = htobe32(6u << 28);
  grh.sgid = *gid;
  ibv_wc wc{};
  wc.wc_flags = IBV_WC_GRH;
  wc.src_qp = 17;
  EXPECT_TRUE(fabric::from_source(wc, grh, *gid, std::nullopt));
  EXPECT_TRUE(fabric::from_source(wc, grh, *gid, 17));
  EXPECT_FALSE(fabric::from_source(wc, grh, *gid, 18));  // another QP of that host
  grh.sgid.raw[15] = 3;                                  // another host
  EXPECT_FALSE(fabric::from_source(wc, grh, *gid, std::nullopt));
  wc.wc_flags = 0;  // no GRH: only the QP can be told
  EXPECT_TRUE(fabric::from_source(wc, grh, *gid, 17));
}

TEST(ud_source, roce_v2_over_ipv4_is_read_from_the_ipv4_header) {
  // 20 undefined bytes, then an IPv4 header from 10.0.0.1 to 10.0.0.2.
  std::uint8_t raw[40] = {};
  const std::uint8_t ip4[20] = {0x45, 0, 0, 0x3c, 0, 0, 0x40, 0, 0x40, 0x11, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};
  std::memcpy(raw + 20, ip4, 20);
  std::uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += static_cast<std::uint32_t>(raw[20 + i] << 8 | raw[21 + i]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  raw[30] = static_cast<std::uint8_t>(~sum >> 8);
  raw[31] = static_cast<std::uint8_t>(~sum);
  ibv_grh grh{};
  std::memcpy(&grh, raw, sizeof raw);
  auto gid = fabric::source_gid(grh);
  ASSERT_TRUE(gid);
  EXPECT_EQ(gid->raw[11], 0xff);
  EXPECT_EQ(gid->raw[12], 10);
  EXPECT_EQ(gid->raw[15], 1);
  raw[30] = raw[31] = 0;  // no checksum, as Soft-RoCE's loopback leaves it
  std::memcpy(&grh, raw, sizeof raw);
  ASSERT_TRUE(fabric::source_gid(grh));
  EXPECT_EQ(fabric::source_gid(grh)->raw[15], 1);
  raw[0] = 0x60;  // a GRH whose bytes at 20 only look like IPv4: its sgid
  std::memcpy(&grh, raw, sizeof raw);
  EXPECT_EQ(fabric::source_gid(grh)->raw[10], grh.sgid.raw[10]);
  EXPECT_NE(fabric::source_gid(grh)->raw[11], 0xff);
}
