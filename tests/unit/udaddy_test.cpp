#include "udaddy.hpp"
#include "parse_options.hpp"

#include "fabric/ud.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <utility>

using namespace udaddy;

namespace {
options parse(std::vector<std::string> args) { return parse_options<options>(std::move(args)); }

report two_connections() {
  report r;
  r.role = "client";
  r.server = "10.0.0.1";
  r.port = 7174;
  r.port_space = "udp";
  r.connections = 2;
  r.count = 10;
  r.size = 100;
  r.timeout_ms = 1000;
  r.mtu = 1024;
  for (std::size_t i = 0; i < 2; ++i) {
    connection_result c;
    c.index = i;
    c.state = "connected";
    c.qpn = 17 + static_cast<std::uint32_t>(i);
    c.remote_qpn = 30;
    c.qkey = 0x01234567;
    c.connect_ms = 2.0;
    c.expected = 10;
    c.sent = 10;
    c.received = 10;
    r.results.push_back(c);
  }
  r.elapsed_ms = 10.0;
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

TEST(udaddy_report, json_has_options_counts_and_results) {
  nlohmann::json j;
  to_json(j, two_connections());
  EXPECT_EQ(j["role"], "client");
  EXPECT_EQ(j["server"], "10.0.0.1");
  EXPECT_FALSE(j.contains("bind"));
  EXPECT_FALSE(j.contains("tos"));
  EXPECT_FALSE(j.contains("verify_errors"));
  EXPECT_EQ(j["connections"], 2);
  EXPECT_EQ(j["sent"], 20);
  EXPECT_EQ(j["received"], 20);
  EXPECT_EQ(j["lost"], 0);
  EXPECT_DOUBLE_EQ(j["messages_per_second"].get<double>(), 4000.0);
  ASSERT_EQ(j["results"].size(), 2U);
  EXPECT_EQ(j["results"][1]["qpn"], 18);
  EXPECT_EQ(j["results"][0]["qkey"], 0x01234567);
  EXPECT_EQ(j["connect_us"]["p50"], 2000.0);
}

TEST(udaddy_report, before_options_only_the_role_is_written) {
  nlohmann::json j;
  to_json(j, report{});
  EXPECT_EQ(j.size(), 1U);
}

TEST(udaddy_report, loss_is_a_test_failure_with_counts) {
  auto r = two_connections();
  r.results[1].received = 6;
  auto [code, why] = verdict(r);
  EXPECT_EQ(code, fabric::exit_code::test_failed);
  EXPECT_EQ(why, "lost 4 of 20 messages: received 16");
  auto lines = loss_lines(r);
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0], "udaddy: connection 1: received 6 of 10 messages, 4 lost");
  nlohmann::json j;
  to_json(j, r);
  EXPECT_EQ(j["lost"], 4);
  EXPECT_EQ(j["results"][1]["lost"], 4);
}

TEST(udaddy_report, missing_connections_fail_the_server) {
  auto r = two_connections();
  r.role = "server";
  r.connections = 3;
  EXPECT_EQ(verdict(r).second, "2 of 3 connections arrived");
}

TEST(udaddy_report, verify_errors_fail) {
  auto r = two_connections();
  r.verify = true;
  r.results[0].verify_errors = 2;
  EXPECT_EQ(verdict(r).first, fabric::exit_code::test_failed);
  nlohmann::json j;
  to_json(j, r);
  EXPECT_EQ(j["verify_errors"], 2);
}

TEST(udaddy_report, clean_run_passes_and_stats_say_so) {
  auto r = two_connections();
  EXPECT_EQ(verdict(r).first, fabric::exit_code::ok);
  EXPECT_TRUE(loss_lines(r).empty());
  auto lines = stats_lines(r);
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0], "udaddy: 2 connections, sent 20, received 20 of 20, lost 0");
  EXPECT_EQ(lines[1], "udaddy: data phase 10.000 ms, 4000 messages/s");
}
