#include "udaddy/udaddy.hpp"
#include "parse_options.hpp"

#include "fabric/cm/ud.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <utility>

using namespace udaddy;

namespace {
options parse(std::vector<std::string> args) { return parse_options<options>(std::move(args)); }

report two_connections() {
  report r;
  r.role = "client";
  r.mtu = 1024;
  for (std::size_t i = 0; i < 2; ++i) {
    connection_result c;
    c.index = i;
    c.state = "connected";
    c.qpn = 17 + static_cast<std::uint32_t>(i);
    c.remote_qpn = 30;
    c.qkey = 0x01234567;
    c.setup_us = 2000.0;
    c.expected = 10;
    c.sent = 10;
    c.received = 10;
    if (i == 1) c.peer = "10.0.0.1:7174";
    r.results.push_back(c);
  }
  r.elapsed_us = 10'000.0;
  return r;
}
}  // namespace

TEST(udaddy_options, defaults_are_the_originals) {
  auto o = parse({});
  EXPECT_TRUE(o.server.empty());
  EXPECT_EQ(o.connections, 1);
  EXPECT_EQ(o.count, 10);
  EXPECT_EQ(o.size, 100);
  EXPECT_EQ(o.port, 7174);
  EXPECT_FALSE(o.verify);
}

TEST(udaddy_options, short_flags_of_the_original) {
  auto o = parse({"-s", "10.0.0.1", "-b", "10.0.0.2", "-c", "4", "-C", "50", "-S", "512", "-t", "0x20", "-p", "0x2",
                  "-f", "ip"});
  EXPECT_EQ(o.server, "10.0.0.1");
  EXPECT_EQ(o.bind, "10.0.0.2");
  EXPECT_EQ(o.connections, 4);
  EXPECT_EQ(o.count, 50);
  EXPECT_EQ(o.size, 512);
  EXPECT_EQ(fabric::parse_number(o.tos, 255), 0x20UL);
  EXPECT_EQ(fabric::parse_port_space(o.port_space, o.port_space_number), RDMA_PS_IPOIB);
}

TEST(udaddy_options, zero_connections_is_a_usage_error) {
  EXPECT_THROW(parse({"-c", "0"}), CLI::ValidationError);
}

TEST(udaddy_options, numbers_use_c_base_prefixes) {
  EXPECT_EQ(fabric::parse_number("12", 255), 12UL);
  EXPECT_EQ(fabric::parse_number("0x1c", 255), 28UL);
  EXPECT_EQ(fabric::parse_number("010", 255), 8UL);
  EXPECT_FALSE(fabric::parse_number("256", 255));
  EXPECT_FALSE(fabric::parse_number("-1", 255));
  EXPECT_FALSE(fabric::parse_number("12z", 255));
  EXPECT_FALSE(fabric::parse_number("", 255));
}

TEST(udaddy_options, port_space_words_match_by_prefix_like_the_original) {
  EXPECT_EQ(fabric::parse_port_space("", ""), RDMA_PS_UDP);
  EXPECT_EQ(fabric::parse_port_space("UDP", ""), RDMA_PS_UDP);
  EXPECT_EQ(fabric::parse_port_space("ipoib", "0x111"), RDMA_PS_IPOIB);  // -P wins over -p
  EXPECT_EQ(fabric::parse_port_space("", "273"), RDMA_PS_UDP);
  EXPECT_FALSE(fabric::parse_port_space("tcp", ""));
  EXPECT_FALSE(fabric::parse_port_space("", "0x106"));
}

TEST(udaddy_options, address_formats) {
  EXPECT_EQ(parse_format("name")->flags, 0);
  EXPECT_EQ(parse_format("ip")->flags, RAI_NUMERICHOST);
  EXPECT_EQ(parse_format("ipv6")->flags, RAI_NUMERICHOST);
  EXPECT_EQ(parse_format("gid")->family, AF_IB);
  EXPECT_FALSE(parse_format("mac"));
}

TEST(udaddy_options, every_option_is_in_the_json_options) {
  CLI::App app;
  options o;
  fabric::cli::add_output_options(app, o.out);
  add_options(app, o);
  auto keys = fabric::cli::option_keys(app);
  auto j = options_json(o);
  EXPECT_EQ(j.size(), keys.size());
  for (const auto& k : keys) EXPECT_TRUE(j.contains(k)) << k;
}

TEST(udaddy_options, json_options_are_typed_and_in_force) {
  auto j = options_json(parse({"-s", "10.0.0.1", "-t", "0x20", "-P", "ipoib"}));
  EXPECT_EQ(j["server"], "10.0.0.1");
  EXPECT_TRUE(j["bind"].is_null());
  EXPECT_EQ(j["tos"], 32);
  EXPECT_EQ(j["port_space"], "ipoib");
  EXPECT_EQ(j["port_space_number"], 2);
  auto d = options_json(parse({}));
  EXPECT_TRUE(d["tos"].is_null());
  EXPECT_EQ(d["port_space_number"], 0x111);
}

TEST(udaddy_options, bad_words_are_usage_errors_before_the_run) {
  for (auto args : std::vector<std::vector<std::string>>{{"-f", "mac"}, {"-P", "tcp"}, {"-p", "0x106"}, {"-t", "256"}, {"-t", "-1"}})
    EXPECT_THROW(validate(parse(args)), fabric::error) << args[0] << " " << args[1];
  EXPECT_NO_THROW(validate(parse({"-t", "0x20", "-f", "ip"})));
  // rdma-core reads a word as type of service 0; so do we, with a warning.
  EXPECT_NO_THROW(validate(parse({"-t", "tcp"})));
  EXPECT_EQ(options_json(parse({"-t", "tcp"}))["tos"], 0);
}

TEST(udaddy_report, json_has_options_counts_and_results) {
  nlohmann::json j;
  to_json(j, parse({"-s", "10.0.0.1", "-c", "2"}), two_connections());
  EXPECT_EQ(j["role"], "client");
  EXPECT_EQ(j["options"]["server"], "10.0.0.1");
  const auto& s = j["summary"];
  EXPECT_EQ(s["connections"], 2);
  EXPECT_EQ(s["failed"], 0);
  EXPECT_EQ(s["sent"], 20);
  EXPECT_EQ(s["received"], 20);
  EXPECT_EQ(s["lost"], 0);
  EXPECT_EQ(s["mtu"], 1024);
  EXPECT_DOUBLE_EQ(s["messages_per_second"].get<double>(), 4000.0);
  EXPECT_EQ(s["connect"]["p50_us"], 2000.0);
  ASSERT_EQ(j["results"].size(), 2U);
  const auto& c = j["results"][1];
  EXPECT_EQ(c["kind"], "connection");
  EXPECT_EQ(c["ok"], true);
  EXPECT_TRUE(c["error"].is_null());
  EXPECT_EQ(c["qpn"], 18);
  EXPECT_EQ(c["qkey"], 0x01234567);
  EXPECT_EQ(c["connect_us"], 2000.0);
  EXPECT_EQ(c["peer"], "10.0.0.1:7174");
  EXPECT_TRUE(j["results"][0]["peer"].is_null());  // not known
}

TEST(udaddy_report, loss_is_a_test_failure_with_counts) {
  auto r = two_connections();
  r.results[1].received = 6;
  auto v = judge(r, 2);
  EXPECT_EQ(v.code, fabric::exit_code::test_failed);
  EXPECT_EQ(v.reason, "lost 4 of 20 messages: received 16");
  auto lines = loss_lines(r);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0], "udaddy: connection 1: received 6 of 10 messages, 4 lost");
  nlohmann::json j;
  to_json(j, parse({}), r);
  EXPECT_EQ(j["summary"]["lost"], 4);
  EXPECT_EQ(j["summary"]["failed"], 1);
  EXPECT_EQ(j["results"][1]["lost"], 4);
  EXPECT_EQ(j["results"][1]["ok"], false);
  EXPECT_EQ(j["results"][1]["error"], "received 6 of 10 messages, 4 lost");
}

TEST(udaddy_report, missing_connections_fail_the_server) {
  auto r = two_connections();
  r.role = "server";
  EXPECT_EQ(judge(r, 3).reason, "2 of 3 connections arrived");
}

TEST(udaddy_report, verify_errors_fail) {
  auto r = two_connections();
  r.results[0].verify_errors = 2;
  EXPECT_EQ(judge(r, 2).code, fabric::exit_code::test_failed);
  nlohmann::json j;
  to_json(j, parse({"--verify"}), r);
  EXPECT_EQ(j["summary"]["verify_errors"], 2);
}

TEST(udaddy_report, a_run_stopped_early_still_renders_every_key) {
  nlohmann::json j;
  to_json(j, parse({}), report{});
  EXPECT_EQ(j["role"], "none");
  EXPECT_TRUE(j["results"].empty());
  EXPECT_EQ(j["summary"]["connect"]["count"], 0);
  EXPECT_TRUE(j["summary"]["elapsed_us"].is_null());
  EXPECT_TRUE(j["summary"]["messages_per_second"].is_null());
}

TEST(udaddy_report, clean_run_passes_and_stats_say_so) {
  auto r = two_connections();
  EXPECT_TRUE(judge(r, 2).ok());
  EXPECT_TRUE(loss_lines(r).empty());
  auto lines = stats_lines(r, 2);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0], "udaddy: 2 of 2 connections, sent 20, received 20 of 20, lost 0");
  EXPECT_EQ(lines[1], "udaddy: data phase 10.000 ms, 4000 messages/s");
}
