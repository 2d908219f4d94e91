#include "ib_acme/ib_acme.hpp"
#include "parse_options.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

TEST(IbAcme, AddrFileNamesTheFirstActivePortAndEveryPort) {
  auto text = ib_acme::addr_file_text("node7.example.org", {{"mlx5_0", 1, false}, {"mlx5_0", 2, true}, {"rxe0", 1, true}});
  auto body = text.substr(text.find("# node31-2"));
  body = body.substr(body.find('\n') + 1);
  EXPECT_EQ(body, "node7-1 mlx5_0 1 default\nnode7 mlx5_0 2 default\nnode7-2 mlx5_0 2 default\nnode7-3 rxe0 1 default\n");
}

TEST(IbAcme, OptsFileHasTheGeneratedDefaults) {
  auto t = ib_acme::opts_file_text();
  for (const char* line : {"\nlog_file /var/log/ibacm.log\n", "\naddr_prot acm\n", "\nroute_prot sa\n", "\nserver_mode unix\n",
                           "\nmin_mtu 2048\n", "\nmin_rate 10\n", "\naddr_preload none\n", "\n# provider ibacmp default\n"})
    EXPECT_NE(t.find(line), std::string::npos) << line;
}

TEST(IbAcme, PathBlockMatchesTheOriginal) {
  fabric::acm::path_record p;
  p.dgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 0xc9, 3, 0, 0, 0, 6};
  p.sgid = p.dgid;
  p.dlid = 6;
  p.slid = 1;
  p.flow_label = 0x10;
  p.reversible = true;
  p.pkey = 0xffff;
  p.sl = 3;
  p.mtu_selector = 2;
  p.mtu = 4;
  p.rate = 0x27;  // the original masks with 0x1f
  p.packet_life_time = 18;
  EXPECT_EQ(ib_acme::format_path(p),
            "Path information\n  dgid: fe80::2:c903:0:6\n  sgid: fe80::2:c903:0:6\n  dlid: 6\n  slid: 1\n"
            "  flow label: 0x10\n  hop limit: 0\n  tclass: 0\n  reversible: 1\n  pkey: 0xffff\n  sl: 3\n"
            "  mtu: 4\n  rate: 7\n  packet lifetime: 18\n");
}

TEST(IbAcme, ComparePathsNamesEveryDifferingField) {
  fabric::acm::path_record a, b;
  a.sl = 1;
  b.sl = 2;
  a.mtu = 4;
  b.mtu = 5;
  auto m = ib_acme::compare_paths(a, b);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].field, "sl");
  EXPECT_EQ(m[1].field, "mtu_code");
  EXPECT_TRUE(ib_acme::compare_paths(a, a).empty());
}

TEST(IbAcme, PathJsonHasTheMtuInBytesAndTheCodesApart) {
  fabric::acm::path_record p;
  p.pkey = 0xffff;
  p.mtu = 4;
  p.rate = 7;
  p.service_id = 0x1000000000000001;  // past 2^53: hex text keeps every digit
  auto j = ib_acme::path_json(p);
  EXPECT_EQ(j["service_id"], "0x1000000000000001");
  EXPECT_EQ(j["pkey"], 0xffff);
  EXPECT_EQ(j["mtu"], 2048);
  EXPECT_EQ(j["mtu_code"], 4);
  EXPECT_EQ(j["rate_code"], 7);
  EXPECT_FALSE(j.contains("mtu_bytes"));
  EXPECT_FALSE(j.contains("rate"));
}

TEST(IbAcme, GidHalvesThatDifferAreHexStringsAndThePortIsSplit) {
  fabric::acm::path_record a, b;
  a.dgid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0xf4, 0x52, 0x14, 3, 0, 0x12, 0x34, 0x56};
  b.dgid = a.dgid;
  b.dgid[15] = 0x57;
  a.sl = 1;
  b.sl = 2;
  ib_acme::lookup l;
  l.service = "/s";
  l.dest = "10.0.0.5";
  l.format = 'i';
  l.path = a;
  l.sa = ib_acme::sa_check{};
  l.sa->checked = true;
  l.sa->device = "mlx5_0";
  l.sa->port = 1;
  l.sa->record = b;
  l.sa->mismatches = ib_acme::compare_paths(a, b);
  auto j = ib_acme::result_json(l, 0);
  const auto& sa = j["verification"]["sa"];
  EXPECT_EQ(sa["device"], "mlx5_0");
  EXPECT_EQ(sa["port"], 1);
  ASSERT_EQ(sa["mismatches"].size(), 2u);
  EXPECT_EQ(sa["mismatches"][0]["field"], "dgid_guid");
  EXPECT_EQ(sa["mismatches"][0]["acm_value"], "0xf452140300123456");
  EXPECT_EQ(sa["mismatches"][0]["sa_value"], "0xf452140300123457");
  EXPECT_EQ(sa["mismatches"][1]["field"], "sl");
  EXPECT_EQ(sa["mismatches"][1]["acm_value"], 1);
  EXPECT_EQ(l.sa->where(), "mlx5_0/1");
  l.sa = ib_acme::sa_check{};
  l.sa->reason = "no active InfiniBand port";
  j = ib_acme::result_json(l, 0);
  EXPECT_TRUE(j["verification"]["sa"]["device"].is_null());
  EXPECT_TRUE(j["verification"]["sa"]["port"].is_null());
}

TEST(IbAcme, JsonHasOneResultPerLookup) {
  ib_acme::report r;
  ib_acme::lookup l;
  l.service = "/s";
  l.dest = "10.0.0.5";
  l.format = 'i';
  l.ok = true;
  l.status = "SUCCESS";
  l.path = fabric::acm::path_record{};
  for (double us : {10.0, 20.0, 30.0}) l.times.add(us);
  l.last_us = 30;
  l.elapsed_s = 0.001;
  r.results.push_back(l);
  l.ok = false;
  l.error = "ACM status ENODATA";
  r.results.push_back(l);
  r.services.push_back({"/s", true, {}});
  nlohmann::json j;
  ib_acme::to_json(j, ib_acme::options{}, r);
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["results"][0]["kind"], "service");
  const auto& first = j["results"][1];
  EXPECT_EQ(first["kind"], "lookup");
  EXPECT_EQ(first["index"], 0);
  EXPECT_EQ(first["format"], "ip");
  EXPECT_TRUE(first["error"].is_null());
  EXPECT_EQ(first["count"], 3);
  EXPECT_EQ(first["latency"]["p50_us"], 20.0);
  EXPECT_DOUBLE_EQ(first["lookups_per_second"].get<double>(), 3000.0);
  EXPECT_TRUE(first["verification"].is_null());
  EXPECT_EQ(j["results"][2]["index"], 1);
  EXPECT_EQ(j["results"][2]["error"], "ACM status ENODATA");
  EXPECT_EQ(j["summary"]["lookups"], 2);
  EXPECT_EQ(j["summary"]["failed"], 1);
  EXPECT_EQ(j["summary"]["latency"]["count"], 6);
  EXPECT_TRUE(j["summary"]["probe_facts"].is_null());

  // --probe: its option verdicts are check items, counted in failed when
  // not usable; the facts stay in the summary without them.
  r.probe = nlohmann::json{{"ports", nlohmann::json::array()},
                           {"provider_path", "/p"},
                           {"options", {{{"option", "route_prot"}, {"usable", false}, {"why", "no SA"}},
                                        {{"option", "provider"}, {"usable", true}, {"why", "fits"}}}}};
  j = nlohmann::json{};
  ib_acme::to_json(j, ib_acme::options{}, r);
  ASSERT_EQ(j["results"].size(), 5u);
  EXPECT_EQ(j["results"][3]["kind"], "check");
  EXPECT_EQ(j["results"][3]["error"], "no SA");
  EXPECT_EQ(j["summary"]["failed"], 2);
  EXPECT_EQ(j["summary"]["probe_facts"]["provider_path"], "/p");
  EXPECT_FALSE(j["summary"]["probe_facts"].contains("options"));
}

TEST(IbAcme, EveryOptionIsInTheJsonOptions) {
  CLI::App app;
  ib_acme::options o;
  fabric::cli::add_output_options(app, o.out);
  ib_acme::add_options(app, o);
  auto keys = fabric::cli::option_keys(app);
  auto j = ib_acme::options_json(o);
  EXPECT_EQ(j.size(), keys.size());
  for (const auto& k : keys) EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_TRUE(j["perf"].is_null());
  EXPECT_TRUE(j["format"].is_null());
}

TEST(IbAcme, ProbeVerdictsAreCheckItems) {
  auto c = ib_acme::check_json({{"option", "route_prot"}, {"value", "sa"}, {"usable", false}, {"why", "no SA answered"}}, 4);
  EXPECT_EQ(c["kind"], "check");
  EXPECT_EQ(c["index"], 4);
  EXPECT_EQ(c["ok"], false);
  EXPECT_EQ(c["error"], "no SA answered");
  EXPECT_TRUE(c["suggested"].is_null());
}

TEST(IbAcme, NumbersThatWouldWrapAreUsageErrors) {
  // -e 300 queried endpoint 44; -f l -d 65538 resolved LID 2.
  for (auto args : std::vector<std::vector<std::string>>{
           {"-e", "300"}, {"-e", "-1"}, {"-P", "256"}, {"-f", "l", "-d", "65538"}, {"-f", "l", "-d", "[65534-65536]"},
           {"-f", "l", "-d", "5", "-s", "70000"}}) {
    EXPECT_THROW(
        {
          auto o = parse_options<ib_acme::options>(args);
          ib_acme::validate(o);
        },
        std::exception)
        << args[0] << " " << args[1];
  }
  auto o = parse_options<ib_acme::options>({"-f", "l", "-d", "65535", "-e", "255"});
  EXPECT_NO_THROW(ib_acme::validate(o));
  EXPECT_EQ(o.ep_index, 255);
}
