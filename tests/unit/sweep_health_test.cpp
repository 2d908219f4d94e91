// fabric-sweep health: a port below the rate or the width asked for fails,
// in words an admin reads at once.
#include "fabric-sweep/health/health.hpp"

#include <gtest/gtest.h>

namespace {

fabric::port_info port(std::string rate, std::uint8_t width, std::uint8_t speed, std::uint8_t state = IBV_PORT_ACTIVE) {
  fabric::port_info p;
  p.device = "rxe0";
  p.port = 1;
  p.state = state;
  p.link_layer = IBV_LINK_LAYER_ETHERNET;
  p.active_mtu = 1024;
  p.rate = std::move(rate);
  p.active_width = width;
  p.active_speed = speed;
  return p;
}

TEST(sweep_health, a_port_below_the_rate_asked_for_is_named_with_its_rate) {
  sweep::health_options h;
  h.expect_rate_gbps = 100;
  EXPECT_EQ(sweep::shortfall(h, port("2.5 Gb/sec (1X SDR)", 1, 1)), "rxe0 port 1: 2.5 Gb/sec (1X SDR), expected 100");
  EXPECT_EQ(sweep::shortfall(h, port("100 Gb/sec (4X EDR)", 2, 32)), "");
  EXPECT_EQ(sweep::shortfall(h, port("200 Gb/sec (4X HDR)", 2, 64)), "") << "faster than asked is no fault";
  EXPECT_EQ(sweep::shortfall(h, port("", 0, 0)), "rxe0 port 1: rate unknown, expected 100");
  EXPECT_EQ(sweep::shortfall(h, port("", 2, 16)), "rxe0 port 1: 56 Gb/sec (4X FDR), expected 100") << "width x speed";
  EXPECT_EQ(sweep::shortfall(h, port("2.5 Gb/sec (1X SDR)", 1, 1, IBV_PORT_DOWN)), "") << "a port that is down is judged as such";
}

TEST(sweep_health, a_port_of_another_width_is_named) {
  sweep::health_options h;
  h.expect_width = "4X";
  EXPECT_EQ(sweep::shortfall(h, port("25 Gb/sec (1X EDR)", 1, 32)), "rxe0 port 1: 1X wide, expected 4X");
  EXPECT_EQ(sweep::shortfall(h, port("100 Gb/sec (4X EDR)", 2, 32)), "");
}

TEST(sweep_health, a_port_of_another_mtu_is_named) {
  sweep::health_options h;
  h.expect_mtu = 4096;
  EXPECT_EQ(sweep::shortfall(h, port("100 Gb/sec (4X EDR)", 2, 32)), "rxe0 port 1: MTU 1024, expected 4096");
  h.expect_mtu = 1024;
  EXPECT_EQ(sweep::shortfall(h, port("100 Gb/sec (4X EDR)", 2, 32)), "");
}

TEST(sweep_health, the_summary_counts_the_ports_as_port_count) {
  sweep::options opt;
  opt.mode = sweep::mode::health;
  sweep::health_report rep;
  rep.address = "10.0.0.1";
  rep.ports = {port("100 Gb/sec (4X EDR)", 2, 32), port("", 2, 32, IBV_PORT_DOWN)};
  nlohmann::json j;
  sweep::to_json(j, opt, rep);
  EXPECT_EQ(j["summary"]["port_count"], 2);
  EXPECT_EQ(j["summary"]["active_ports"], 1);
  EXPECT_FALSE(j["summary"].contains("ports")) << "ports is ib_acme's array of ports";
}

TEST(sweep_health, the_port_line_says_its_rate) {
  EXPECT_EQ(sweep::port_line(port("10 Gb/sec (4X QDR)", 2, 4)), "rxe0 port 1: Active, Ethernet, MTU 1024, 10 Gb/sec (4X QDR)");
  auto hostile = port("10 Gb/sec\x1b[2J", 2, 4);
  EXPECT_EQ(sweep::port_line(hostile).find('\x1b'), std::string::npos);
}

}  // namespace
