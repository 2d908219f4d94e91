// A port's names and rate, as verbs and the kernel report them.
#include "fabric/verbs/ports.hpp"

#include "fake_sysfs.hpp"

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

TEST(ports, a_roce_port_names_its_network_device_in_its_gid_attributes) {
  fake::sysfs sys;
  sys.file("class/infiniband/rxe1/ports/1/gid_attrs/ndevs/0", "eth1");
  sys.file("class/infiniband/rxe1/parent", "eth9");
  EXPECT_EQ(port_netdev(sys.root(), "rxe1", 1), "eth1") << "the GID's own device first";
  EXPECT_EQ(port_netdev(sys.root(), "rxe1", 2), "eth9") << "else a software device's parent";
  EXPECT_EQ(port_netdev(sys.root(), "nosuch0", 1), "");
}

TEST(ports, an_ipoib_port_is_the_network_device_of_its_function_with_its_dev_port) {
  fake::sysfs sys;
  sys.pci_device("mlx4_0", "0000:3b:00.0", "8", "8.0 GT/s PCIe", "8", "8.0 GT/s PCIe");
  sys.file("devices/pci0000:00/0000:00:02.0/0000:3b:00.0/net/ib0/dev_port", "0");
  sys.file("devices/pci0000:00/0000:00:02.0/0000:3b:00.0/net/ib1/dev_port", "1");
  EXPECT_EQ(port_netdev(sys.root(), "mlx4_0", 1), "ib0");
  EXPECT_EQ(port_netdev(sys.root(), "mlx4_0", 2), "ib1");
  EXPECT_EQ(port_netdev(sys.root(), "mlx4_0", 3), "");
}

TEST(ports, the_pcie_link_of_a_device_and_what_it_and_its_slot_can_do) {
  fake::sysfs sys;
  sys.pci_device("mlx5_0", "0000:3b:00.0", "8", "8.0 GT/s PCIe", "16", "16.0 GT/s PCIe");
  auto l = read_pcie_link(sys.root(), "mlx5_0");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->function, "0000:3b:00.0");
  EXPECT_EQ(l->width, 8u);
  EXPECT_EQ(l->speed_gts, 8.0);
  EXPECT_EQ(l->max_width, 16u);
  EXPECT_EQ(l->max_speed_gts, 16.0);
}

TEST(ports, a_slot_narrower_or_slower_than_its_device_sets_the_most) {
  fake::sysfs sys;
  sys.pci_device("mlx5_0", "0000:3b:00.0", "8", "8.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "8", "8.0 GT/s PCIe");
  auto l = read_pcie_link(sys.root(), "mlx5_0");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->max_width, 8u);
  EXPECT_EQ(l->max_speed_gts, 8.0);
}

TEST(ports, a_device_of_no_pci_function_has_no_pcie_link) {
  fake::sysfs sys;
  sys.file("class/infiniband/rxe0/parent", "eth0");
  EXPECT_FALSE(read_pcie_link(sys.root(), "rxe0"));
  EXPECT_FALSE(read_pcie_link(sys.root(), "nosuch0"));
}

TEST(ports, a_figure_the_kernel_does_not_give_is_unknown) {
  fake::sysfs sys;
  sys.pci_device("mlx5_0", "0000:3b:00.0", "0", "Unknown", "16", "16.0 GT/s PCIe");
  auto l = read_pcie_link(sys.root(), "mlx5_0");
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->width) << "width 0: no link";
  EXPECT_FALSE(l->speed_gts);
  EXPECT_EQ(l->max_width, 16u);
}

TEST(ports, pcie_speeds_and_generations) {
  EXPECT_EQ(pcie_speed_of_text("16.0 GT/s PCIe"), 16.0);
  EXPECT_EQ(pcie_speed_of_text("2.5 GT/s"), 2.5);
  EXPECT_EQ(pcie_speed_of_text("8 GT/s"), 8.0);
  EXPECT_FALSE(pcie_speed_of_text("Unknown"));
  EXPECT_FALSE(pcie_speed_of_text(""));
  EXPECT_EQ(pcie_generation(2.5), 1u);
  EXPECT_EQ(pcie_generation(16), 4u);
  EXPECT_EQ(pcie_generation(64), 6u);
  EXPECT_EQ(pcie_generation(12), 0u);
  EXPECT_EQ(pcie_generation_gts(5), 32.0);
  EXPECT_EQ(pcie_generation_gts(7), 0.0);
}

}  // namespace
