// fabric-sweep health: each rule that fails a host, in words an admin
// reads at once, on ports and devices of the tests' making (a fake sysfs
// tree for what the kernel shows there).
#include "fabric-sweep/health/health.hpp"

#include "fake_sysfs.hpp"
#include "parse_options.hpp"

#include <gtest/gtest.h>

#include <map>

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

/// A port of `device`, 100 Gb/sec 4X EDR, Active unless said.
fabric::port_info on(std::string device, std::uint8_t state = IBV_PORT_ACTIVE, std::string rate = "100 Gb/sec (4X EDR)") {
  auto p = port(std::move(rate), 2, 32, state);
  p.device = std::move(device);
  return p;
}

sweep::host_port host_port(fabric::port_info p, std::string address = "") {
  return {std::move(p), address.empty() ? "" : "eth0", address};
}

/// A host's report with these ports, each device's PCIe link unknown.
sweep::health_report report_of(std::vector<fabric::port_info> ports) {
  sweep::health_report rep;
  rep.address = "10.0.0.1";
  for (auto& p : ports) {
    if (std::none_of(rep.devices.begin(), rep.devices.end(), [&p](const sweep::host_device& d) { return d.name == p.device; }))
      rep.devices.push_back({p.device, std::nullopt});
    rep.ports.push_back(host_port(std::move(p)));
  }
  return rep;
}

fabric::pcie_link link(unsigned width, double gts, unsigned max_width, double max_gts) {
  return {"0000:3b:00.0", width, gts, max_width, max_gts};
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

TEST(sweep_health, a_port_of_another_speed_is_named) {
  sweep::health_options h;
  h.expect_speed = "HDR";
  EXPECT_EQ(sweep::shortfall(h, port("100 Gb/sec (4X EDR)", 2, 32)), "rxe0 port 1: speed EDR, expected HDR");
  EXPECT_EQ(sweep::shortfall(h, port("200 Gb/sec (4X HDR)", 2, 64)), "");
}

TEST(sweep_health, a_port_of_another_mtu_is_named) {
  sweep::health_options h;
  h.expect_mtu = 4096;
  EXPECT_EQ(sweep::shortfall(h, port("100 Gb/sec (4X EDR)", 2, 32)), "rxe0 port 1: MTU 1024, expected 4096");
  h.expect_mtu = 1024;
  EXPECT_EQ(sweep::shortfall(h, port("100 Gb/sec (4X EDR)", 2, 32)), "");
}

TEST(sweep_health, width_and_speed_words_are_taken_in_any_case) {
  auto opt = parse_options<sweep::options>({"health", "--expect-width", "4x", "--expect-speed", "edr"});
  EXPECT_EQ(opt.health.expect_width, "4X");
  EXPECT_EQ(opt.health.expect_speed, "EDR");
  opt = parse_options<sweep::options>({"health", "--expect-width", "12x"});
  EXPECT_EQ(opt.health.expect_width, "12X");
}

TEST(sweep_health, device_takes_a_list_comma_separated_or_repeated_each_once) {
  auto opt = parse_options<sweep::options>(
                                           {"health", "--device", "mlx5_0,mlx5_1", "--device", "mlx5_2", "--device", "mlx5_0"});
  EXPECT_EQ(opt.health.devices, (std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2"}));
  EXPECT_EQ(sweep::options_json(opt)["device"], "mlx5_0,mlx5_1,mlx5_2") << "the option's text, as one would give it";
  EXPECT_EQ(sweep::options_json(parse_options<sweep::options>({"health"}))["device"], nullptr);
}

TEST(sweep_health, expect_pcie_reads_width_and_generation_in_any_case) {
  using sweep::pcie_expectation;
  EXPECT_EQ(sweep::pcie_expectation_of("x16gen4"), (pcie_expectation{16, 4}));
  EXPECT_EQ(sweep::pcie_expectation_of("X16Gen4"), (pcie_expectation{16, 4}));
  EXPECT_EQ(sweep::pcie_expectation_of("x8"), (pcie_expectation{8, 0}));
  EXPECT_EQ(sweep::pcie_expectation_of("GEN5"), (pcie_expectation{0, 5}));
  for (const char* bad : {"", "x", "gen", "16", "x16 gen4", "x15", "x016", "gen7", "gen0", "x16gen4x", "gen4x16", "x-1"})
    EXPECT_FALSE(sweep::pcie_expectation_of(bad)) << bad;
  EXPECT_EQ(sweep::pcie_expectation_text({16, 4}), "x16gen4");
  EXPECT_EQ(sweep::pcie_expectation_text({0, 3}), "gen3");
  auto opt = parse_options<sweep::options>({"health", "--expect-pcie", "X8GEN3"});
  EXPECT_EQ(sweep::options_json(opt)["expect_pcie"], "x8gen3");
}

TEST(sweep_health, a_down_port_among_active_ones_fails_the_host_and_is_named) {
  // One rail of eight down: the host fails, naming it.
  std::vector<fabric::port_info> ports;
  for (int i = 0; i < 8; ++i) ports.push_back(on(fmt::format("mlx5_{}", i), i == 5 ? IBV_PORT_DOWN : IBV_PORT_ACTIVE));
  auto rep = report_of(ports);
  sweep::options opt;
  auto v = sweep::judge(opt, rep);
  EXPECT_EQ(v.code, fabric::exit_code::test_failed);
  EXPECT_EQ(v.reason, "mlx5_5 port 1 is Down");
  EXPECT_EQ(sweep::port_state_problem(opt.health, rep, rep.ports[5].info), "the port is Down");
  EXPECT_EQ(sweep::port_state_problem(opt.health, rep, rep.ports[4].info), "");
}

TEST(sweep_health, expect_ports_states_how_many_must_be_active) {
  auto rep = report_of({on("mlx4_0"), on("mlx4_0", IBV_PORT_DOWN)});
  rep.ports[1].info.port = 2;
  sweep::options opt;
  opt.health.expect_ports = 1;
  EXPECT_TRUE(sweep::judge(opt, rep).ok()) << "one port cabled, one asked for";
  EXPECT_EQ(sweep::port_state_problem(opt.health, rep, rep.ports[1].info), "") << "not a fault when the count holds";
  opt.health.expect_ports = 2;
  auto v = sweep::judge(opt, rep);
  EXPECT_EQ(v.code, fabric::exit_code::test_failed);
  EXPECT_EQ(v.reason, "1 Active port, expected 2: mlx4_0 port 2 is Down");
  opt.health.expect_ports = 3;
  rep.ports[1].info.state = IBV_PORT_ACTIVE;
  EXPECT_EQ(sweep::judge(opt, rep).reason, "2 Active ports, expected 3");
  EXPECT_EQ(sweep::expected_ports(opt.health, rep), 3u);
  EXPECT_EQ(sweep::expected_ports(sweep::health_options{}, rep), 2u) << "by default every port of the devices";
}

TEST(sweep_health, no_active_port_at_all_is_no_device_as_before) {
  auto rep = report_of({on("rxe0", IBV_PORT_DOWN)});
  auto v = sweep::judge(sweep::options{}, rep);
  EXPECT_EQ(v.code, fabric::exit_code::no_device);
  EXPECT_EQ(v.reason, "no Active port: rxe0 port 1 is Down");
}

TEST(sweep_health, the_chosen_devices_alone_are_checked_and_a_missing_one_is_named) {
  fake::sysfs sys;
  sweep::health_options h;
  h.devices = {"mlx5_0", "mlx5_1"};
  h.expect_rate_gbps = 100;
  sweep::health_report rep;
  // The management port is slower; it is not among the rails asked for.
  sweep::gather(h, {sys.root(), {}}, {on("mlx5_0"), on("mlx5_1"), on("mlx5_2", IBV_PORT_ACTIVE, "25 Gb/sec (1X EDR)")}, rep);
  ASSERT_EQ(rep.ports.size(), 2u);
  EXPECT_TRUE(rep.missing.empty());
  sweep::options opt;
  opt.health = h;
  rep.address = "10.0.0.1";
  EXPECT_TRUE(sweep::judge(opt, rep).ok()) << sweep::judge(opt, rep).reason;

  sweep::health_report none;
  opt.health.devices = {"mlx5_0", "mlx5_9"};
  sweep::gather(opt.health, {sys.root(), {}}, {on("mlx5_0"), on("mlx5_1")}, none);
  EXPECT_EQ(none.missing, std::vector<std::string>{"mlx5_9"});
  auto v = sweep::judge(opt, none);
  EXPECT_EQ(v.code, fabric::exit_code::no_device);
  EXPECT_EQ(v.reason, "no port of mlx5_9");
}

TEST(sweep_health, gather_finds_each_ports_network_device_address_and_pcie_link) {
  fake::sysfs sys;
  sys.pci_device("mlx5_0", "0000:3b:00.0", "16", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe");
  sys.file("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "ens1f0");
  sys.file("class/infiniband/rxe1/parent", "eth1");
  std::map<std::string, std::string> addresses{{"ens1f0", "10.0.0.1"}, {"eth1", "10.0.1.1"}};
  sweep::host_view view{sys.root(), [&](const std::string& n) { return addresses.count(n) ? addresses[n] : ""; }};
  sweep::health_report rep;
  sweep::gather({}, view, {on("mlx5_0"), on("rxe1")}, rep);
  ASSERT_EQ(rep.ports.size(), 2u);
  EXPECT_EQ(rep.ports[0].netdev, "ens1f0");
  EXPECT_EQ(rep.ports[0].address, "10.0.0.1");
  EXPECT_EQ(rep.ports[1].netdev, "eth1");
  EXPECT_EQ(rep.ports[1].address, "10.0.1.1");
  ASSERT_EQ(rep.devices.size(), 2u);
  ASSERT_TRUE(rep.devices[0].pcie);
  EXPECT_EQ(rep.devices[0].pcie->width, 16u);
  EXPECT_FALSE(rep.devices[1].pcie) << "rxe has no PCI function";
  EXPECT_EQ(sweep::rails(rep), (std::vector<std::size_t>{0, 1}));
}

TEST(sweep_health, a_device_trained_below_its_maximum_fails_the_host) {
  sweep::health_options h;
  sweep::host_device d{"mlx5_0", link(8, 8.0, 16, 16.0)};
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "mlx5_0: PCIe x8 8.0 GT/s, the slot and device can do x16 16.0 GT/s");
  d.pcie = link(16, 8.0, 16, 16.0);
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "mlx5_0: PCIe x16 8.0 GT/s, the slot and device can do x16 16.0 GT/s") << "a lower generation";
  d.pcie = link(8, 16.0, 16, 16.0);
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "mlx5_0: PCIe x8 16.0 GT/s, the slot and device can do x16 16.0 GT/s") << "fewer lanes";
  d.pcie = link(16, 16.0, 16, 16.0);
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "");
  d.pcie = fabric::pcie_link{"0000:3b:00.0", std::nullopt, std::nullopt, 16, 16.0};
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "") << "figures the kernel does not give are no finding";
  d.pcie = std::nullopt;
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "") << "no PCIe link (rxe, siw) is no failure";
  auto rep = report_of({on("mlx5_0")});
  rep.devices[0].pcie = link(8, 8.0, 16, 16.0);
  sweep::options opt;
  auto v = sweep::judge(opt, rep);
  EXPECT_EQ(v.code, fabric::exit_code::test_failed);
  EXPECT_EQ(v.reason, "mlx5_0: PCIe x8 8.0 GT/s, the slot and device can do x16 16.0 GT/s");
}

TEST(sweep_health, expect_pcie_states_what_the_link_must_be) {
  sweep::health_options h;
  h.expect_pcie = sweep::pcie_expectation{16, 4};
  sweep::host_device d{"mlx5_0", link(16, 16.0, 16, 32.0)};
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "") << "a gen5 device at gen4, as asked";
  d.pcie = link(16, 8.0, 16, 8.0);
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "mlx5_0: PCIe x16 8.0 GT/s, expected x16 16.0 GT/s") << "at its maximum, below what was asked";
  d.pcie = link(8, 16.0, 8, 16.0);
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "mlx5_0: PCIe x8 16.0 GT/s, expected x16 16.0 GT/s");
  d.pcie = fabric::pcie_link{"0000:3b:00.0", std::nullopt, 16.0, 16, 16.0};
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "mlx5_0: PCIe x? 16.0 GT/s, expected x16 16.0 GT/s") << "asked, and not told";
  h.expect_pcie = sweep::pcie_expectation{8, 0};
  d.pcie = link(8, 2.5, 16, 16.0);
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "") << "x8 at any speed";
  d.pcie = std::nullopt;
  EXPECT_EQ(sweep::pcie_shortfall(h, d), "") << "no PCIe link to hold to it";
}

TEST(sweep_health, the_first_rule_broken_is_the_verdict) {
  auto rep = report_of({on("mlx5_0", IBV_PORT_ACTIVE, "25 Gb/sec (1X EDR)"), on("mlx5_1")});
  rep.devices[1].pcie = link(8, 8.0, 16, 16.0);
  rep.self = sweep::pair_result{};
  rep.self->error = "10.0.0.1:18515: no ping back in time";
  sweep::options opt;
  opt.health.expect_rate_gbps = 100;
  EXPECT_EQ(sweep::judge(opt, rep).reason, "mlx5_0 port 1: 25 Gb/sec (1X EDR), expected 100");
  opt.health.expect_rate_gbps.reset();
  EXPECT_EQ(sweep::judge(opt, rep).reason, "mlx5_1: PCIe x8 8.0 GT/s, the slot and device can do x16 16.0 GT/s");
  rep.devices[1].pcie.reset();
  auto v = sweep::judge(opt, rep);
  EXPECT_EQ(v.code, fabric::exit_code::connect_failed);
  EXPECT_EQ(v.reason, "self-connection to 10.0.0.1: 10.0.0.1:18515: no ping back in time");
  rep.self->ok = true;
  rep.ports[0].address = "10.0.0.1";
  rep.ports[1].address = "10.0.1.1";
  rep.rail_pairs.push_back({0, 1, {}});
  rep.rail_pairs[0].result.error = "10.0.1.1:18516: no ping back in time";
  v = sweep::judge(opt, rep);
  EXPECT_EQ(v.code, fabric::exit_code::connect_failed);
  EXPECT_EQ(v.reason, "from rail mlx5_0 port 1 (10.0.0.1) to rail mlx5_1 port 1 (10.0.1.1): 10.0.1.1:18516: no ping back in time");
  rep.rail_pairs[0].result.ok = true;
  EXPECT_TRUE(sweep::judge(opt, rep).ok());
}

TEST(sweep_health, the_document_carries_every_figure_and_each_results_verdict) {
  auto rep = report_of({on("mlx5_0"), on("mlx5_1", IBV_PORT_DOWN), on("rxe0")});
  rep.ports[0] = host_port(rep.ports[0].info, "10.0.0.1");
  rep.devices[0].pcie = link(8, 8.0, 16, 16.0);
  rep.self = sweep::pair_result{};
  rep.self->ok = true;
  rep.self->port = 18515;
  rep.rail_pairs.push_back({0, 2, {}});
  rep.rail_pairs[0].result.port = 18516;
  rep.rail_pairs[0].result.error = "rxe0 port 1 has no network device";
  sweep::options opt;
  opt.mode = sweep::mode::health;
  nlohmann::json j;
  sweep::to_json(j, opt, rep);
  const auto& r = j["results"];
  ASSERT_EQ(r.size(), 3u + 3u + 1u + 1u);
  EXPECT_EQ(r[0]["kind"], "port");
  EXPECT_EQ(r[0]["netdev"], "eth0");
  EXPECT_EQ(r[0]["address"], "10.0.0.1");
  EXPECT_EQ(r[1]["ok"], false);
  EXPECT_EQ(r[1]["error"], "the port is Down");
  EXPECT_EQ(r[2]["address"], nullptr);
  EXPECT_EQ(r[3]["kind"], "device");
  EXPECT_EQ(r[3]["index"], 0);
  EXPECT_EQ(r[3]["pcie_width"], 8);
  EXPECT_EQ(r[3]["pcie_speed_gts"], 8.0);
  EXPECT_EQ(r[3]["pcie_max_width"], 16);
  EXPECT_EQ(r[3]["pcie_max_speed_gts"], 16.0);
  EXPECT_EQ(r[3]["pcie_function"], "0000:3b:00.0");
  EXPECT_EQ(r[3]["ok"], false);
  EXPECT_EQ(r[5]["device"], "rxe0");
  EXPECT_EQ(r[5]["pcie_width"], nullptr) << "rxe: no PCIe figures, and no failure";
  EXPECT_EQ(r[5]["ok"], true);
  EXPECT_EQ(r[6]["kind"], "self");
  EXPECT_EQ(r[7]["kind"], "rail_pair");
  EXPECT_EQ(r[7]["device"], "mlx5_0");
  EXPECT_EQ(r[7]["peer_device"], "rxe0");
  EXPECT_EQ(r[7]["peer"], nullptr);
  EXPECT_EQ(r[7]["port"], 18516);
  EXPECT_EQ(r[7]["error"], "rxe0 port 1 has no network device");
  const auto& s = j["summary"];
  EXPECT_EQ(s["port_count"], 3);
  EXPECT_EQ(s["active_ports"], 2);
  EXPECT_EQ(s["expected_ports"], 3);
  EXPECT_EQ(s["failed"], 3) << "the Down port, the PCIe link, the rail pair";
  EXPECT_EQ(s["self_ok"], true);
  EXPECT_EQ(s["intra_ok"], false);
  EXPECT_FALSE(s.contains("ports")) << "ports is ib_acme's array of ports";
}

TEST(sweep_health, rail_pairs_need_ports_above_port) {
  auto rep = report_of({on("rxe0"), on("rxe1")});
  sweep::options opt;
  opt.run.port = 65535;
  try {
    sweep::ping_host(opt, "h1", rep);
    FAIL() << "no room for the rail pair's port";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage);
    EXPECT_STREQ(e.what(), "--port 65535: the rail pairs take the ports above it, up to 65536, past 65535");
  }
  EXPECT_FALSE(rep.self) << "nothing tried";
}

TEST(sweep_health, the_port_line_says_its_rate) {
  EXPECT_EQ(sweep::port_line(port("10 Gb/sec (4X QDR)", 2, 4)), "rxe0 port 1: Active, Ethernet, MTU 1024, 10 Gb/sec (4X QDR)");
  auto hostile = port("10 Gb/sec\x1b[2J", 2, 4);
  EXPECT_EQ(sweep::port_line(hostile).find('\x1b'), std::string::npos);
}

TEST(sweep_health, the_device_line_says_its_pcie_link_and_its_most) {
  EXPECT_EQ(sweep::device_line({"mlx5_0", link(16, 16.0, 16, 32.0)}), "mlx5_0: PCIe x16 16.0 GT/s of x16 32.0 GT/s (0000:3b:00.0)");
  EXPECT_EQ(sweep::device_line({"rxe0", std::nullopt}), "");
}

}  // namespace
