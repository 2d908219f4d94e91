// fabric-sweep on rails (--rails): what the option names, what a host has
// of each rail on a fake sysfs tree, the plan the ranks agree at the start
// (a host short of a rail, a port down), the ports and keys of each rail's
// meetings, NUMA nodes' CPUs, and the meeting lines read as hostile input.
#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/intra.hpp"
#include "fabric-sweep/rank/meetings.hpp"
#include "fabric-sweep/rank/pair.hpp"
#include "fabric-sweep/rank/rails.hpp"
#include "fabric-sweep/rank/rounds.hpp"

#include "fabric/base/cpus.hpp"
#include "fabric/base/error.hpp"
#include "fabric/verbs/ports.hpp"

#include "fake_sysfs.hpp"
#include "parse_options.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace {

using sweep::rail_spec;

fabric::port_info port_of(std::string device, std::uint8_t port = 1, std::uint8_t state = IBV_PORT_ACTIVE) {
  fabric::port_info p;
  p.device = std::move(device);
  p.port = port;
  p.state = state;
  p.link_layer = IBV_LINK_LAYER_ETHERNET;
  p.active_mtu = 1024;
  p.rate = "100 Gb/sec (4X EDR)";
  return p;
}

/// The usage error's words, or "" when `f` throws none.
template <class F>
std::string usage_error_of(F&& f) {
  try {
    f();
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage) << e.what();
    return e.what();
  }
  return {};
}

TEST(sweep_rails, the_option_names_auto_devices_or_templates) {
  EXPECT_FALSE(sweep::rail_spec_of("").given());
  EXPECT_EQ(sweep::rail_spec_of("auto").by, rail_spec::kind::automatic);
  auto devices = sweep::rail_spec_of("mlx5_0,mlx5_1");
  EXPECT_EQ(devices.by, rail_spec::kind::devices);
  EXPECT_EQ(devices.items, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
  auto templates = sweep::rail_spec_of("{host}-ib0,{short}-ib1");
  EXPECT_EQ(templates.by, rail_spec::kind::templates);
  EXPECT_EQ(templates.items, (std::vector<std::string>{"{host}-ib0", "{short}-ib1"}));
}

TEST(sweep_rails, every_bad_list_is_a_usage_error_naming_why) {
  struct bad_case {
    std::string text, says;
  };
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += (i ? ",mlx5_" : "mlx5_") + std::to_string(i);
  std::string thousand;
  for (int i = 0; i < 1000; ++i) thousand += (i ? ",{host}-ib" : "{host}-ib") + std::to_string(i);
  for (const auto& [text, says] : std::vector<bad_case>{
           {"mlx5_0,,mlx5_1", "an empty item"},
           {"mlx5_0,", "an empty item"},
           {"mlx5_0,{host}-ib1", "not both"},
           {"mlx5_0,mlx5_0", "'mlx5_0' is named twice"},
           {"mlx5 0", "neither a device name nor an address template"},
           {"../mlx5_0", "neither a device name"},
           {"\x1b[2J", "'\\x1b[2J'"},
           {"{host} ib0", "not an address template"},
           {seventeen, "more than 16 rails"},
           {std::string(65, 'x'), "longer than 64 bytes"},
           // Hostile lists: bytes that are not UTF-8, a thousand rails, a
           // template whose {host} is mistyped, one item a template and
           // another not.
           {"mlx5_0,\xff\xfe", "'\\xff\\xfe' is neither a device name"},
           {thousand, "more than 16 rails"},
           {"{hots}-ib0", "neither a device name nor an address template"},
           {"{host}-ib0,node-ib1", "not both"},
           {",", "an empty item"},
       })
    EXPECT_NE(usage_error_of([&] { sweep::rail_spec_of(text); }).find(says), std::string::npos) << text;
}

TEST(sweep_rails, rails_are_in_the_order_of_their_names_numbers_by_value) {
  std::vector<std::string> names{"mlx5_10", "mlx5_2", "ib1", "mlx5_1", "mlx5_0", "rxe1", "rxe0"};
  std::sort(names.begin(), names.end(), sweep::rail_order);
  EXPECT_EQ(names, (std::vector<std::string>{"ib1", "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10", "rxe0", "rxe1"}));
  EXPECT_FALSE(sweep::rail_order("mlx5_1", "mlx5_1"));
  EXPECT_NE(sweep::rail_order("mlx5_01", "mlx5_1"), sweep::rail_order("mlx5_1", "mlx5_01")) << "a strict order";
}

/// A host of four devices on a fake tree: mlx5_0 and mlx5_1 Active on
/// NUMA nodes 0 and 1, each with its network device and address; mlx5_2
/// Active without an address; mlx5_3 Down.
struct four_devices {
  fake::sysfs sys;
  std::map<std::string, std::string> addresses{{"ens1f0", "10.0.0.7"}, {"ens2f0", "10.0.1.7"}};
  std::vector<fabric::port_info> ports{port_of("mlx5_3", 1, IBV_PORT_DOWN), port_of("mlx5_1"), port_of("mlx5_0"),
                                       port_of("mlx5_2")};
  four_devices() {
    sys.pci_device("mlx5_0", "0000:3b:00.0", "16", "16.0 GT/s PCIe", "16", "16.0 GT/s PCIe");
    sys.file("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "ens1f0");
    sys.file("class/infiniband/mlx5_0/device/numa_node", "0");
    sys.file("class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0", "ens2f0");
    sys.file("class/infiniband/mlx5_1/device/numa_node", "1");
    sys.file("class/infiniband/mlx5_2/ports/1/gid_attrs/ndevs/0", "ens3f0");
    sys.file("devices/system/node/node0/cpulist", "0-3,8-11");
    sys.file("devices/system/node/node1/cpulist", "4-7,12-15");
  }
  [[nodiscard]] sweep::host_view view() {
    return {sys.root(), [this](const std::string& n) { return addresses.count(n) ? addresses[n] : std::string(); }};
  }
};

TEST(sweep_rails, auto_finds_every_device_with_its_address_trouble_and_numa_node) {
  four_devices host;
  auto mine = sweep::find_rails(sweep::rail_spec_of("auto"), host.view(), host.ports, "node07", {});
  ASSERT_EQ(mine.size(), 4u);
  EXPECT_EQ(mine[0].name, "mlx5_0");
  EXPECT_EQ(mine[0].address, "10.0.0.7");
  EXPECT_EQ(mine[0].trouble, "");
  EXPECT_TRUE(mine[0].active);
  EXPECT_EQ(mine[0].cpus, (std::vector<unsigned>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(mine[1].name, "mlx5_1");
  EXPECT_EQ(mine[1].address, "10.0.1.7");
  EXPECT_EQ(mine[1].cpus, (std::vector<unsigned>{4, 5, 6, 7, 12, 13, 14, 15}));
  EXPECT_EQ(mine[2].name, "mlx5_2");
  EXPECT_EQ(mine[2].trouble, "its network device ens3f0 has no address");
  EXPECT_TRUE(mine[2].cpus.empty()) << "no numa_node: any CPU";
  EXPECT_EQ(mine[3].name, "mlx5_3");
  EXPECT_EQ(mine[3].trouble, "its port is Down");
  EXPECT_FALSE(mine[3].active);
}

TEST(sweep_rails, a_device_list_keeps_its_order_and_names_a_device_not_here) {
  four_devices host;
  auto mine = sweep::find_rails(sweep::rail_spec_of("mlx5_1,mlx5_9,mlx5_0"), host.view(), host.ports, "node07", {});
  ASSERT_EQ(mine.size(), 3u);
  EXPECT_EQ(mine[0].name, "mlx5_1");
  EXPECT_EQ(mine[0].address, "10.0.1.7");
  EXPECT_EQ(mine[1].trouble, "no RDMA device mlx5_9");
  EXPECT_EQ(mine[2].address, "10.0.0.7");
}

TEST(sweep_rails, a_device_of_two_ports_is_its_first_active_one) {
  four_devices host;
  host.ports = {port_of("mlx5_0", 1, IBV_PORT_DOWN), port_of("mlx5_0", 2)};
  host.sys.file("class/infiniband/mlx5_0/ports/2/gid_attrs/ndevs/0", "ens1f1");
  host.addresses["ens1f1"] = "10.0.2.7";
  auto mine = sweep::find_rails(sweep::rail_spec_of("auto"), host.view(), host.ports, "node07", {});
  ASSERT_EQ(mine.size(), 1u);
  ASSERT_TRUE(mine[0].port);
  EXPECT_EQ(mine[0].port->port, 2);
  EXPECT_EQ(mine[0].address, "10.0.2.7");
}

TEST(sweep_rails, templates_give_each_host_its_address_and_the_port_there) {
  four_devices host;
  std::vector<std::string> asked;
  auto at = [&](const std::string& a) {
    asked.push_back(a);
    fabric::own_rdma out;
    if (a == "node07-ib1") out.trouble = "no RDMA device has the address node07-ib1";
    else out.port = port_of("mlx5_0");
    return out;
  };
  auto mine = sweep::find_rails(sweep::rail_spec_of("{host}-ib0,{short}-ib1"), host.view(), {}, "node07.cluster", at);
  EXPECT_EQ(asked, (std::vector<std::string>{"node07.cluster-ib0", "node07-ib1"}));
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].name, "{host}-ib0");
  EXPECT_EQ(mine[0].address, "node07.cluster-ib0");
  EXPECT_EQ(mine[0].cpus, (std::vector<unsigned>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(mine[1].trouble, "no RDMA device has the address node07-ib1");
}

std::vector<sweep::rail_word> words(std::initializer_list<sweep::rail_word> w) { return w; }

TEST(sweep_rails, the_ranks_agree_on_rails_by_name_and_a_short_host_is_named_on_its_missing_rail) {
  // rank 1 has no rxe1 at all; rank 2's rxe1 port is Down: neither shifts rxe0.
  std::vector<std::optional<std::vector<sweep::rail_word>>> said{
      words({{"rxe0", "10.0.0.1", "", true}, {"rxe1", "10.0.1.1", "", true}}),
      words({{"rxe0", "10.0.0.2", "", true}}),
      words({{"rxe1", "", "its port is Down", false}, {"rxe0", "10.0.0.3", "", true}}),
      std::nullopt,  // rank 3 did not come
  };
  auto plan = sweep::agree_rails(sweep::rail_spec_of("auto"), said);
  EXPECT_EQ(plan.names, (std::vector<std::string>{"rxe0", "rxe1"}));
  EXPECT_EQ(plan.address_of(1, 0), "10.0.0.2");
  EXPECT_EQ(plan.trouble_of(1, 1), "no RDMA device rxe1 (1 rail here, 2 in the sweep)");
  EXPECT_EQ(plan.address_of(1, 1), "");
  EXPECT_EQ(plan.address_of(2, 0), "10.0.0.3");
  EXPECT_EQ(plan.trouble_of(2, 1), "its port is Down");
  EXPECT_FALSE(plan.seated(3));
  sweep::rails_here here{sweep::rail_spec_of("auto"), false, {}, plan};
  std::vector<std::string> hosts{"a", "b", "c", "d"};
  EXPECT_EQ(here.cannot(2, 1, hosts), "c cannot take part on rail rxe1: its port is Down");
  EXPECT_EQ(here.cannot(2, 0, hosts), "");
  EXPECT_EQ(here.cannot(3, 0, hosts), "d said nothing of its rails at the start");
}

TEST(sweep_rails, a_rail_down_on_every_host_is_no_rail_and_a_list_is_the_lists) {
  std::vector<std::optional<std::vector<sweep::rail_word>>> said{
      words({{"mlx5_0", "10.0.0.1", "", true}, {"mlx5_9", "", "its port is Down", false}}),
      words({{"mlx5_0", "10.0.0.2", "", true}, {"mlx5_9", "", "its port is Down", false}}),
  };
  EXPECT_EQ(sweep::agree_rails(sweep::rail_spec_of("auto"), said).names, (std::vector<std::string>{"mlx5_0"}));
  auto listed = sweep::agree_rails(sweep::rail_spec_of("mlx5_9,mlx5_0"), said);
  EXPECT_EQ(listed.names, (std::vector<std::string>{"mlx5_9", "mlx5_0"}));
  EXPECT_EQ(listed.trouble_of(0, 0), "its port is Down");
  EXPECT_EQ(listed.address_of(1, 1), "10.0.0.2");
}

TEST(sweep_rails, without_rank_0s_answer_templates_still_name_each_peers_address) {
  std::vector<sweep::own_rail> mine{{"{short}-ib0", "n1-ib0", "", true, std::nullopt, {}}};
  auto plan = sweep::plan_alone(sweep::rail_spec_of("{short}-ib0"), mine, 0, {"n1.c", "n2.c"});
  EXPECT_EQ(plan.address_of(1, 0), "n2-ib0");
  std::vector<sweep::own_rail> devices{{"mlx5_0", "10.0.0.1", "", true, std::nullopt, {}}};
  auto alone = sweep::plan_alone(sweep::rail_spec_of("mlx5_0"), devices, 0, {"n1", "n2"});
  EXPECT_EQ(alone.address_of(0, 0), "10.0.0.1");
  EXPECT_NE(alone.trouble_of(1, 0).find("not known"), std::string::npos);
}

TEST(sweep_rails, meetings_are_rail_by_rail_or_every_rail_with_every_other_each_rail_busy_once_a_group) {
  auto same = sweep::rail_meetings(4, false);
  ASSERT_EQ(same.size(), 1u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(same[0][static_cast<std::size_t>(i)], (sweep::rail_meeting{i, i}));
  auto cross = sweep::rail_meetings(4, true);
  ASSERT_EQ(cross.size(), 4u);
  std::set<std::pair<int, int>> all;
  for (const auto& group : cross) {
    std::set<int> servers, clients;
    for (const auto& m : group) {
      EXPECT_TRUE(servers.insert(m.server).second);
      EXPECT_TRUE(clients.insert(m.client).second);
      EXPECT_TRUE(all.insert({m.server, m.client}).second);
    }
  }
  EXPECT_EQ(all.size(), 16u);
  // Re-tests of some meetings: no rail twice in a group.
  auto groups = sweep::meeting_groups({{0, 1}, {0, 0}, {1, 1}, {0, 1}});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0], (std::vector<sweep::rail_meeting>{{0, 0}, {1, 1}}));
  EXPECT_EQ(groups[1], (std::vector<sweep::rail_meeting>{{0, 1}}));
  EXPECT_EQ(sweep::intra_meetings(3), (std::vector<sweep::rail_meeting>{{1, 0}, {2, 0}, {2, 1}}));
}

TEST(sweep_rails, ports_stay_apart_across_a_rounds_pairs_and_rails_and_the_intra_round) {
  for (bool cross : {false, true})
    for (int n : {2, 4, 9, 64}) {
      auto plan = sweep::port_plan::of(18515, n, 4, cross, true);
      ASSERT_GE(plan.cycle(), 6) << n;
      std::set<int> near;
      for (int step = 0; step < plan.cycle(); ++step) {
        for (int slot = 0; slot < std::max(1, n / 2); ++slot)
          for (const auto& group : sweep::rail_meetings(4, cross))
            for (const auto& m : group) {
              int port = plan.port(step, slot, sweep::meeting_index(m, 4, cross));
              EXPECT_GE(port, 18515);
              EXPECT_LE(port, 65535);
              EXPECT_TRUE(near.insert(port).second) << n << " step " << step;
            }
        // The intra round is a step of its own: its ports are the step's.
        for (int k = 0; k < 6; ++k) {
          int port = plan.intra_port(step, k);
          EXPECT_GE(port, plan.port(step, 0));
          EXPECT_LT(port, plan.port(step, 0) + plan.width());
        }
      }
    }
  // One rail: the ports as ever.
  EXPECT_EQ(sweep::port_plan::of(18515, 10).port(3, 2), sweep::pair_port(18515, 10, 3, {0, 1, 2}));
  EXPECT_EQ(sweep::port_plan::of(18515, 10).port(3, 2), 18515 + 3 * 5 + 2);
  // Sixteen rails crossed over a thousand hosts leave no room above the port.
  EXPECT_LT(sweep::port_plan::of(18515, 1000, 16, true).cycle(), 6);
}

TEST(sweep_rails, a_rails_key_names_its_rails_and_no_one_rail_key_starts_it) {
  sweep::pairing p{3, 7, 0};
  auto key = sweep::pair_key(12, p, {1, 2});
  ASSERT_EQ(key.size(), fabric::max_key_bytes);
  auto byte = [&](std::size_t i) { return std::to_integer<int>(key[i]); };
  EXPECT_EQ(std::string({char(byte(0)), char(byte(1)), char(byte(2)), char(byte(3))}), "FSWR");
  EXPECT_EQ(byte(17), 1);
  EXPECT_EQ(byte(19), 2);
  std::set<std::vector<std::byte>> keys{key, sweep::pair_key(12, p, {2, 1}), sweep::pair_key(12, p, {1, 1}),
                                        sweep::pair_key(13, p, {1, 2}), sweep::pair_key(12, {3, 8, 0}, {1, 2})};
  EXPECT_EQ(keys.size(), 5u);
  auto one = sweep::pair_key(12, p);
  EXPECT_FALSE(fabric::carries_key(key, one)) << "a one-rail server refuses a rail's client";
  EXPECT_FALSE(fabric::carries_key(one, key));
}

TEST(sweep_rails, cpu_lists_as_the_kernel_writes_them) {
  EXPECT_EQ(fabric::parse_cpu_list("0-3,8,10-11\n"), (std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(fabric::parse_cpu_list(""), std::vector<unsigned>{}) << "a node of memory only";
  EXPECT_EQ(fabric::parse_cpu_list("5"), (std::vector<unsigned>{5}));
  EXPECT_EQ(fabric::parse_cpu_list("3,1-2,2"), (std::vector<unsigned>{1, 2, 3}));
  for (const char* bad : {"3-1", "0-", "-3", "0,,1", "0-3,", "a", "0 - 3", "9000", "0-99999999999", " 1"})
    EXPECT_FALSE(fabric::parse_cpu_list(bad)) << bad;
  four_devices host;
  EXPECT_EQ(fabric::device_numa_node(host.sys.root(), "mlx5_1"), 1);
  EXPECT_FALSE(fabric::device_numa_node(host.sys.root(), "mlx5_2"));
  host.sys.file("class/infiniband/mlx5_2/device/numa_node", "-1");
  EXPECT_FALSE(fabric::device_numa_node(host.sys.root(), "mlx5_2")) << "-1: no node known";
  EXPECT_FALSE(fabric::node_cpus(host.sys.root(), 7));
  EXPECT_EQ(sweep::device_cpus(host.sys.root(), "mlx5_1").size(), 8u);
}

TEST(sweep_rails, the_start_lines_carry_each_ranks_rails_and_rank_0s_plan) {
  sweep::rank_word w{2, {}, {}};
  w.rails = words({{"rxe0", "10.0.0.3", "", true}, {"rxe1", "", "its port is Down", false}});
  auto said = sweep::read_rank_line(sweep::rank_line(-1, w), 4, -1);
  ASSERT_TRUE(said);
  ASSERT_TRUE(said->rails);
  ASSERT_EQ(said->rails->size(), 2u);
  EXPECT_EQ((*said->rails)[0].address, "10.0.0.3");
  EXPECT_EQ((*said->rails)[1].trouble, "its port is Down");
  EXPECT_FALSE((*said->rails)[1].active);

  sweep::agreement a;
  a.present = {0, 1};
  a.rails = sweep::agree_rails(sweep::rail_spec_of("auto"),
                               {words({{"rxe0", "10.0.0.1", "", true}, {"rxe1", "10.0.1.1", "", true}}),
                                words({{"rxe0", "10.0.0.2", "", true}}), std::nullopt});
  auto back = sweep::read_agreement(sweep::agreement_line(a), 3);
  ASSERT_TRUE(back);
  ASSERT_TRUE(back->rails);
  EXPECT_EQ(back->rails->names, a.rails->names);
  EXPECT_EQ(back->rails->address, a.rails->address);
  EXPECT_EQ(back->rails->trouble, a.rails->trouble);
}

TEST(sweep_rails, hostile_rails_in_a_ranks_line_are_refused) {
  std::string many = R"({"rank":1,"sweep":-1,"figures":[],"rails":[)";
  for (int i = 0; i < 17; ++i) many += std::string(i ? "," : "") + R"({"name":"r)" + std::to_string(i) + R"(","active":true})";
  many += "]}";
  for (const std::string& lie : {
           many,
           std::string(R"({"rank":1,"sweep":-1,"figures":[],"rails":[{"name":"a","active":true},{"name":"a","active":true}]})"),
           std::string(R"({"rank":1,"sweep":-1,"figures":[],"rails":[{"name":"","active":true}]})"),
           std::string(R"({"rank":1,"sweep":-1,"figures":[],"rails":[{"name":"a b","active":true}]})"),
           std::string(R"({"rank":1,"sweep":-1,"figures":[],"rails":[{"name":"a\u001b[2J","active":true}]})"),
           R"({"rank":1,"sweep":-1,"figures":[],"rails":[{"name":")" + std::string(65, 'x') + R"(","active":true}]})",
           R"({"rank":1,"sweep":-1,"figures":[],"rails":[{"name":"a","address":")" + std::string(256, '1') + R"(","active":true}]})",
           R"({"rank":1,"sweep":-1,"figures":[],"rails":[{"name":"a","trouble":")" + std::string(300, 't') + R"(","active":false}]})",
           std::string(R"({"rank":1,"sweep":-1,"figures":[],"rails":[{"name":"a"}]})"),
           std::string(R"({"rank":1,"sweep":-1,"figures":[],"rails":{"name":"a"}})"),
           std::string(R"({"rank":1,"sweep":-1,"figures":[],"rail_rates":[-1]})"),
       })
    EXPECT_FALSE(sweep::read_rank_line(lie, 4, -1)) << lie;
}

TEST(sweep_rails, figures_on_rails_name_their_rails_and_rank_0_refuses_others) {
  sweep::rank_word w{3, {}, {}};
  w.rail_figures = {{{{0, 3}, 20.5}, {1, 1}}, {{{2, 3}, 19}, {0, 1}}};
  w.rail_rates = {100, 0};
  auto line = sweep::rank_line(7, w);
  auto got = sweep::read_rank_line(line, 4, 7, 2);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->rail_figures.size(), 2u);
  EXPECT_EQ(got->rail_figures[1].rails, (sweep::rail_meeting{0, 1}));
  EXPECT_EQ(got->rail_rates, (std::vector<double>{100, 0}));
  EXPECT_FALSE(sweep::read_rank_line(line, 4, 7, 1)) << "rail 1 of one rail";
  EXPECT_FALSE(sweep::read_rank_line(line, 4, 7, 0)) << "rails where the run has one";
  EXPECT_FALSE(sweep::read_rank_line(R"({"rank":3,"sweep":7,"figures":[[0,3,20]]})", 4, 7, 2)) << "a figure without its rails";
  EXPECT_FALSE(sweep::read_rank_line(R"({"rank":3,"sweep":7,"figures":[[0,3,20,-1,0]]})", 4, 7, 2));
  EXPECT_FALSE(sweep::read_rank_line(R"({"rank":3,"sweep":7,"figures":[[0,3,20,0.5,0]]})", 4, 7, 2));
}

TEST(sweep_rails, rank_0s_rails_and_rail_retests_are_read_as_hostile) {
  sweep::agreement a;
  a.retest = {{0, 2}};
  a.retest_rails = {{{0, 2}, {1, 1}}};
  auto back = sweep::read_agreement(sweep::agreement_line(a), 4, 2);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->retest_rails, a.retest_rails);
  EXPECT_FALSE(sweep::read_agreement(sweep::agreement_line(a), 4, 1)) << "rail 1 of one rail";
  EXPECT_FALSE(sweep::read_agreement(sweep::agreement_line(a), 4, 0)) << "rails where the run has one";
  for (const char* lie : {
           R"({"retest":[],"rails":{"names":["a","a"],"troubles":[],"seats":[]}})",
           R"({"retest":[],"rails":{"names":["a"],"troubles":[],"seats":[[0,["x","y"],[null,null]]]}})",
           R"({"retest":[],"rails":{"names":["a"],"troubles":[],"seats":[[4,["x"],[null]]]}})",
           R"({"retest":[],"rails":{"names":["a"],"troubles":[],"seats":[[1,["x"],[null]],[0,["y"],[null]]]}})",
           R"({"retest":[],"rails":{"names":["a"],"troubles":[],"seats":[[0,[null],[0]]]}})",
           R"({"retest":[],"rails":{"names":["a"],"troubles":["t","u"],"seats":[[0,[null],[0]]]}})",
           R"({"retest":[],"rails":{"names":["a"],"troubles":[],"seats":[[0,["x y"],[null]]]}})",
           R"({"retest":[],"rails":{"names":["a"],"troubles":[]}})",
           R"({"retest":[],"rails":[]})",
       })
    EXPECT_FALSE(sweep::read_agreement(lie, 4)) << lie;
}

TEST(sweep_rails, the_slow_rail_of_a_pair_is_the_outlier_not_its_siblings) {
  // Four hosts on two rails: every meeting near 20 Gb/s but a-d's rail 1.
  std::vector<sweep::rail_figure> all;
  for (int s = 0; s < 4; ++s)
    for (int c = s + 1; c < 4; ++c)
      for (int rail = 0; rail < 2; ++rail)
        all.push_back({{{s, c}, s == 0 && c == 3 && rail == 1 ? 2.0 : 20.0 + s + rail * 0.5}, {rail, rail}});
  sweep::fleet_bar bar;
  auto slow = sweep::rail_outliers(sweep::check::bw, all, {}, bar);
  EXPECT_EQ(slow, (std::vector<sweep::rail_retest>{{{0, 3}, {1, 1}}}));
  // --expect-gbps auto: each meeting by its two rails' ports.
  sweep::verdict_options by_ports;
  by_ports.expect_gbps_auto = true;
  by_ports.bw_fraction = 0.5;
  std::vector<std::vector<double>> rates(4, std::vector<double>{30, 30});
  rates[2][0] = 100;  // c's rail 0 could do more: its meetings there are judged by the lower side
  EXPECT_EQ(sweep::rail_outliers(sweep::check::bw, all, by_ports, bar, std::nullopt, rates),
            (std::vector<sweep::rail_retest>{{{0, 3}, {1, 1}}}));
}

TEST(sweep_rails, the_options_of_rails_and_what_they_refuse) {
  auto o = parse_options<sweep::options>({"--rails", "auto", "--cross-rails", "--intra", "--check", "bw"});
  sweep::validate(o);
  auto j = sweep::options_json(o);
  EXPECT_EQ(j["rail_list"], "auto");
  EXPECT_EQ(j["cross_rails"], true);
  EXPECT_EQ(j["intra"], true);
  auto plain = sweep::options_json(parse_options<sweep::options>({}));
  EXPECT_TRUE(plain["rail_list"].is_null());
  EXPECT_EQ(plain["cross_rails"], false);
  struct bad_case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const auto& [args, says] : std::vector<bad_case>{
           {{"--cross-rails"}, "--cross-rails: give --rails"},
           {{"--intra"}, "--intra: a host's rails meet one another: give --rails"},
           {{"--check", "intra"}, "--check intra: a host's rails meet one another: give --rails"},
           {{"--rails", "auto", "--check", "acm"}, "--rails: --check acm"},
           {{"--rails", "auto", "--check", "multicast"}, "--rails: --check multicast"},
           {{"--rails", "auto", "--check", "intra", "--cross-rails"}, "--cross-rails: --check intra"},
           {{"--rails", "auto", "--check", "intra", "--quick"}, "--check intra has every host at once"},
           {{"--rails", "mlx5_0,mlx5_0"}, "named twice"},
       })
    EXPECT_NE(usage_error_of([&] { sweep::validate(parse_options<sweep::options>(args)); }).find(says), std::string::npos)
        << args.front() << " " << says;
  EXPECT_THROW(parse_options<sweep::options>({"report", "--rails", "auto"}), std::exception);
}

TEST(sweep_rails, a_pairs_lines_name_its_rails) {
  sweep::pair_result p;
  p.check = sweep::check::bw;
  p.server = "a";
  p.client = "b";
  p.round = 1;
  p.error = "no answer";
  p.role = "server";
  auto single = sweep::pair_json(p, 0, std::nullopt);
  EXPECT_TRUE(single["server_rail"].is_null());
  EXPECT_TRUE(single["client_rail"].is_null());
  EXPECT_EQ(sweep::pair_line(p, false, 0), "round 2: a <-> b: error: no answer");
  p.rails = sweep::rail_meeting{1, 1};
  p.server_rail = p.client_rail = "mlx5_1";
  EXPECT_EQ(sweep::pair_json(p, 0, std::nullopt)["server_rail"], "mlx5_1");
  EXPECT_EQ(sweep::pair_line(p, false, 0), "round 2: a <-> b on mlx5_1: error: no answer");
  p.client_rail = "mlx5_0";
  EXPECT_EQ(sweep::pair_line(p, false, 0), "round 2: a <-> b on mlx5_1 <-> mlx5_0: error: no answer");
  p.check = sweep::check::intra;
  p.client = "a";
  EXPECT_EQ(sweep::pair_line(p, false, 0), "round 2: a on mlx5_0 -> mlx5_1: error: no answer");
}

TEST(sweep_rails, a_hosts_rail_it_cannot_use_fails_its_intra_pairs_untried_saying_why) {
  // Three rails on host b (rank 1), none it can use: rxe1's port is Down,
  // rxe0 and rxe2 have no address. Each intra pair fails at once, naming
  // the first rail of the two that keeps it (the client's, then the
  // server's); nothing touches a device.
  std::vector<std::optional<std::vector<sweep::rail_word>>> said{
      words({{"rxe0", "10.0.0.1", "", true}, {"rxe1", "10.0.1.1", "", true}, {"rxe2", "10.0.2.1", "", true}}),
      words({{"rxe0", "", "its network device eth0 has no address", true},
             {"rxe1", "", "its port is Down", false},
             {"rxe2", "", "its network device eth2 has no address", true}}),
  };
  sweep::rails_here here{sweep::rail_spec_of("auto"), false, {}, sweep::agree_rails(sweep::rail_spec_of("auto"), said)};
  ASSERT_EQ(here.plan.size(), 3);
  auto opt = parse_options<sweep::options>({"--rails", "auto", "--check", "intra"});
  sweep::place where{1, {"a", "b"}, "hosts"};
  auto ports = sweep::port_plan::of(18515, 2, 3, false, true);
  auto pairs = sweep::intra_round(opt, where, here, ports, 0, 0);
  ASSERT_EQ(pairs.size(), 3u);
  std::vector<std::tuple<std::string, std::string, std::string>> got;
  for (const auto& p : pairs) {
    EXPECT_FALSE(p.ok);
    EXPECT_EQ(p.check, sweep::check::intra);
    EXPECT_EQ(p.server, "b");
    EXPECT_EQ(p.client, "b");
    EXPECT_EQ(p.server_rank, 1);
    got.emplace_back(p.client_rail, p.server_rail, p.error);
  }
  EXPECT_EQ(got, (std::vector<std::tuple<std::string, std::string, std::string>>{
                     {"rxe0", "rxe1", "b cannot take part on rail rxe0: its network device eth0 has no address"},
                     {"rxe0", "rxe2", "b cannot take part on rail rxe0: its network device eth0 has no address"},
                     {"rxe1", "rxe2", "b cannot take part on rail rxe1: its port is Down"}}));
  // Each intra pair on a port of its own.
  EXPECT_NE(pairs[0].port, pairs[1].port);
  EXPECT_NE(pairs[1].port, pairs[2].port);
  auto line = sweep::pair_json(pairs[2], 0, std::nullopt);
  EXPECT_EQ(line["check"], "intra");
  EXPECT_EQ(line["client_rail"], "rxe1");
  EXPECT_EQ(line["server_rail"], "rxe2");
}

}  // namespace
