// fabric-sweep's checks are one table: the schema's lists of checks and
// the man page's --check paragraph name exactly its entries.
#include "fabric-sweep/rank/checks.hpp"
#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/pair.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::vector<std::string> table_names() {
  std::vector<std::string> out;
  for (const auto& k : sweep::check_kinds()) out.emplace_back(k.name);
  return out;
}

TEST(sweep_checks, the_table_is_in_the_order_of_the_enum_and_every_word_reads_back) {
  for (const auto& k : sweep::check_kinds()) {
    EXPECT_EQ(&sweep::kind_of(k.id), &k);
    EXPECT_EQ(sweep::check_of(k.name), k.id);
    EXPECT_EQ(k.in_rounds, k.run != nullptr) << k.name << ": a check in rounds runs a pair, one that is not does not";
    EXPECT_TRUE(k.say) << k.name;
    EXPECT_TRUE(k.default_count > 0 || k.default_duration_ms > 0) << k.name << " counts or runs for a time";
    EXPECT_LE(k.default_size, k.max_size) << k.name;
  }
}

TEST(sweep_checks, the_schemas_lists_of_checks_are_the_tables) {
  auto schema = nlohmann::json::parse(read(FABRIC_SOURCE_DIR "/schemas/fabric-sweep.schema.json"));
  int lists = 0;
  // Every enum that names a check names them all, in the table's order
  // (null besides, where the option may be absent).
  std::function<void(const nlohmann::json&, const std::string&)> walk = [&](const nlohmann::json& j, const std::string& at) {
    if (j.is_object()) {
      for (const auto& [key, value] : j.items()) {
        if (key == "enum" && value.is_array() && std::find(value.begin(), value.end(), "ping") != value.end()) {
          std::vector<std::string> names;
          for (const auto& v : value)
            if (v.is_string()) names.push_back(v.get<std::string>());
          EXPECT_EQ(names, table_names()) << at;
          ++lists;
        }
        walk(value, at + "/" + key);
      }
    } else if (j.is_array()) {
      for (const auto& v : j) walk(v, at);
    }
  };
  walk(schema, "");
  EXPECT_GE(lists, 3) << "the options' check, the pair lines' and the report's";
}

TEST(sweep_checks, the_man_pages_check_paragraph_names_every_check) {
  auto man = read(FABRIC_SOURCE_DIR "/man/fabric-sweep.1");
  auto at = man.find(".BI \\-\\-check \" check\"");
  ASSERT_NE(at, std::string::npos);
  auto end = man.find("\n.TP", at);
  auto paragraph = man.substr(at, end - at);
  for (const auto& name : table_names())
    EXPECT_NE(paragraph.find("\n.B " + name + "\n"), std::string::npos) << name << " is not in --check's paragraph";
}

TEST(sweep_checks, defaults_come_from_the_table) {
  sweep::run_options r;
  r.check = sweep::check::bw;
  EXPECT_FALSE(sweep::pair_count(r)) << "bw writes for a time";
  EXPECT_EQ(sweep::pair_duration(r), 1000);
  EXPECT_EQ(sweep::pair_size(r), 1 << 20);
  r.count = 50;
  EXPECT_EQ(sweep::pair_count(r), 50);
  EXPECT_FALSE(sweep::pair_duration(r)) << "-C counts the writes instead";
  r = {};
  EXPECT_EQ(sweep::pair_count(r), 100);
  EXPECT_EQ(sweep::pair_size(r), 64);
  EXPECT_FALSE(sweep::pair_duration(r));
}

/// A pair as one side saw it: ok, between a and b, round 1.
sweep::pair_result pair_of(sweep::check c, std::string role) {
  sweep::pair_result p;
  p.check = c;
  p.server = "a";
  p.client = "b";
  p.role = std::move(role);
  p.ok = true;
  return p;
}

TEST(sweep_pair_fields, the_line_and_the_json_give_one_value_under_one_key) {
  auto client = pair_of(sweep::check::ping, "client");
  client.pings = 20;
  client.latency = fabric::latency_summary{.count = 20, .min = 9, .p50 = 10, .p99 = 12, .p999 = 12, .max = 12};
  EXPECT_EQ(sweep::pair_line(client, false, 64).rfind("round 1: a <-> b: 20 pings, rtt min 9.00 p50 10.00", 0), 0u)
      << sweep::pair_line(client, false, 64);
  auto j = sweep::pair_json(client, 0, std::nullopt);
  EXPECT_EQ(j["pings"], 20);
  EXPECT_EQ(j["latency"]["p50_us"], 10.0);

  auto server = pair_of(sweep::check::ping, "server");
  server.pings = 20;
  EXPECT_EQ(sweep::pair_line(server, false, 64), "round 1: a <-> b: served 20 pings");
  EXPECT_TRUE(sweep::pair_json(server, 0, std::nullopt)["latency"].is_null());
}

TEST(sweep_pair_fields, every_figure_is_in_the_json_null_when_the_check_has_none) {
  auto p = pair_of(sweep::check::ud, "client");
  p.ok = false;
  p.error = "no datagram in time";
  auto j = sweep::pair_json(p, 3, std::string("r1"));
  for (const char* key : {"pings", "received", "connections", "sent", "lost", "lookups", "connect_us", "elapsed_us", "latency",
                          "bandwidth"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["sent"].is_null());
  EXPECT_EQ(sweep::pair_line(p, false, 64), "round 1: a <-> b: error: no datagram in time");
}

TEST(sweep_pair_fields, a_pair_line_carries_its_sides_port_in_the_subnet) {
  auto p = pair_of(sweep::check::ping, "server");
  auto unknown = sweep::pair_json(p, 0, std::nullopt);
  EXPECT_TRUE(unknown["port_guid"].is_null());
  EXPECT_TRUE(unknown["lid"].is_null());
  p.port_guid = 0x0002c90300a1b2c3;
  p.lid = 17;
  auto j = sweep::pair_json(p, 0, std::nullopt);
  EXPECT_EQ(j["port_guid"], "0x0002c90300a1b2c3");
  EXPECT_EQ(j["lid"], 17);
}

TEST(sweep_pair_fields, a_bw_line_names_each_direction_by_its_hosts) {
  auto p = pair_of(sweep::check::bw, "client");
  p.client_to_server = fabric::transfer{1'000'000'000, 1.0};
  p.server_to_client = fabric::transfer{500'000'000, 1.0};
  EXPECT_EQ(sweep::pair_line(p, false, 65536), "round 1: a <-> b: b -> a 8.0 Gb/s, a -> b 4.0 Gb/s in 64 KiB writes");
  EXPECT_EQ(sweep::pair_json(p, 0, std::nullopt)["bandwidth"]["server_to_client"]["bytes"], 500'000'000);
}

TEST(sweep_pair_fields, a_bandwidth_far_below_10_gbps_keeps_two_significant_digits) {
  EXPECT_EQ(sweep::gbps_text(96.14), "96.1");
  EXPECT_EQ(sweep::gbps_text(10), "10.0");
  EXPECT_EQ(sweep::gbps_text(2.5), "2.5");
  EXPECT_EQ(sweep::gbps_text(0.47), "0.47");
  EXPECT_EQ(sweep::gbps_text(0.0473), "0.047") << "a link at a two-thousandth of 100 Gb/s is not 0.0";
  EXPECT_EQ(sweep::gbps_text(0), "0.0");
}

}  // namespace
