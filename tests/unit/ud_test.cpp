#include "fabric/ud.hpp"

#include <gtest/gtest.h>

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
  EXPECT_EQ(c.send_depth + c.recv_depth, 32766U);  // the shared CQ holds both
}
