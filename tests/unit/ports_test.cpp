// A port's names and rate, as verbs and the kernel report them.
#include "fabric/verbs/ports.hpp"

#include <gtest/gtest.h>

namespace {

using namespace fabric;

TEST(ports, names_of_widths_speeds_and_mtus) {
  EXPECT_EQ(width_name(2), "4X");
  EXPECT_EQ(width_lanes(2), 4u);
  EXPECT_EQ(width_name(1), "1X");
  EXPECT_EQ(width_name(3), "unknown");
  EXPECT_EQ(speed_name(32), "EDR");
  EXPECT_DOUBLE_EQ(lane_gbps(64), 50);
  EXPECT_EQ(speed_name(0), "unknown");
  EXPECT_EQ(mtu_bytes(IBV_MTU_256), 256u);
  EXPECT_EQ(mtu_bytes(IBV_MTU_4096), 4096u);
  EXPECT_EQ(mtu_bytes(0), 0u);
  EXPECT_EQ(mtu_bytes(9), 0u);
}

TEST(ports, the_rate_is_the_kernels_else_width_times_speed) {
  EXPECT_EQ(rate_of_text("100 Gb/sec (4X EDR)"), 100);
  EXPECT_EQ(rate_of_text("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_FALSE(rate_of_text(""));
  EXPECT_FALSE(rate_of_text("fast"));
  EXPECT_FALSE(rate_of_text("-5 Gb/sec"));
  port_info p;
  EXPECT_FALSE(p.rate_gbps()) << "neither known";
  p.active_width = 2;
  p.active_speed = 32;
  EXPECT_EQ(p.rate_gbps(), 100) << "4X EDR";
  p.rate = "25 Gb/sec (1X EDR)";
  EXPECT_EQ(p.rate_gbps(), 25) << "the kernel's word first";
}

}  // namespace
