#include "fabric/cli/cli.hpp"
#include "fabric/cli/console.hpp"
#include "fabric/base/text.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using fabric::output_mode;

namespace {

/// A command line that the tests can hand to mode_in_argv.
struct argv_of {
  explicit argv_of(std::vector<std::string> a) : args(std::move(a)) {
    args.insert(args.begin(), "tool");
    for (auto& s : args) ptrs.push_back(s.data());
  }
  int argc() const { return static_cast<int>(ptrs.size()); }
  char** argv() { return ptrs.data(); }
  std::vector<std::string> args;
  std::vector<char*> ptrs;
};

struct app_with_flags {
  CLI::App app;
  fabric::cli::output_options out;
  bool verify = false;
  std::string addr;
  app_with_flags() {
    fabric::cli::add_output_options(app, out);
    app.add_flag("-V,--verify", verify);
    app.add_option("-a,--addr", addr);
  }
  output_mode mode(std::vector<std::string> args) {
    argv_of a(std::move(args));
    return fabric::cli::mode_in_argv(app, a.argc(), a.argv());
  }
};

}  // namespace

TEST(cli, json_spellings_are_seen_in_a_command_line_that_did_not_parse) {
  app_with_flags t;
  EXPECT_EQ(t.mode({"--bogus"}), output_mode::human);
  EXPECT_EQ(t.mode({"-j", "--bogus"}), output_mode::document);
  EXPECT_EQ(t.mode({"--json", "--bogus"}), output_mode::document);
  EXPECT_EQ(t.mode({"--json=true", "--bogus"}), output_mode::document);
  EXPECT_EQ(t.mode({"--json=lines", "--bogus"}), output_mode::lines);
  EXPECT_EQ(t.mode({"-jV", "--bogus"}), output_mode::document);
  EXPECT_EQ(t.mode({"-Vj"}), output_mode::document);
  EXPECT_EQ(t.mode({"-jX"}), output_mode::document);
  // -a takes a value: "-aj" is the address "j", not -j.
  EXPECT_EQ(t.mode({"-aj", "--bogus"}), output_mode::human);
  EXPECT_EQ(t.mode({"--", "-j"}), output_mode::human);
}

TEST(cli, json_option_parses_to_a_mode) {
  for (auto [arg, want] : {std::pair{"-j", output_mode::document}, {"--json", output_mode::document},
                           {"--json=lines", output_mode::lines}, {"--json=document", output_mode::document}}) {
    app_with_flags t;
    t.app.parse(std::vector<std::string>{arg});
    EXPECT_EQ(t.out.mode(), want) << arg;
  }
  app_with_flags t;
  EXPECT_THROW(t.app.parse(std::vector<std::string>{"--json=yaml"}), CLI::ValidationError);
}

TEST(cli, document_has_every_common_key) {
  auto d = fabric::cli::make_document("rping", {fabric::exit_code::timeout, "no answer"});
  for (const char* k : {"schema", "tool", "version", "host", "role", "ok", "exit_code", "error", "options", "results",
                        "summary"})
    EXPECT_TRUE(d.contains(k)) << k;
  EXPECT_EQ(d["schema"], "fabric-toolkit/rping/1");
  // fabric-sweep's report's summary.ok, a count, became summary.passed:
  // its version moved, so that a script reading the old key can tell.
  EXPECT_EQ(fabric::schema_name("fabric-sweep"), "fabric-toolkit/fabric-sweep/2");
  EXPECT_EQ(d["exit_code"], 6);
  EXPECT_EQ(d["ok"], false);
  EXPECT_EQ(d["error"], "no answer");
  EXPECT_TRUE(fabric::cli::make_document("rping", {})["error"].is_null());
}

TEST(cli, option_keys_are_long_names_with_underscores) {
  CLI::App app;
  fabric::cli::output_options out;
  bool b = false;
  fabric::cli::add_output_options(app, out);
  app.add_flag("--busy-poll", b);
  app.add_flag("-q", b);  // no long name: no key
  EXPECT_EQ(fabric::cli::option_keys(app), std::vector<std::string>{"busy_poll"});
}

TEST(console, json_text_survives_bytes_that_are_not_utf8) {
  nlohmann::json j{{"data", std::string("ok\xff\xfe end")}};
  std::string text;
  ASSERT_NO_THROW(text = fabric::dump_json(j));
  EXPECT_EQ(text, "{\"data\":\"ok\xEF\xBF\xBD\xEF\xBF\xBD end\"}");
  EXPECT_EQ(text.find('\n'), std::string::npos);
}

TEST(console, an_event_is_built_only_where_it_is_written) {
  int built = 0;
  auto payload = [&] {
    ++built;
    return nlohmann::json{{"index", 1}};
  };
  testing::internal::CaptureStdout();
  fabric::console("rping", fabric::output_mode::human).event("connected", payload);
  fabric::console("rping", fabric::output_mode::document).event("connected", payload);
  EXPECT_EQ(built, 0);
  fabric::console("rping", fabric::output_mode::lines).event("connected", payload);
  auto line = nlohmann::json::parse(testing::internal::GetCapturedStdout());
  EXPECT_EQ(built, 1);
  EXPECT_EQ(line["event"], "connected");
  EXPECT_EQ(line["connected"]["index"], 1);
}

TEST(console, peer_bytes_are_made_safe_for_a_terminal) {
  // rping's own pattern, backslash included, passes unchanged.
  EXPECT_EQ(fabric::printable("rdma-ping-0: XYZ[\\]^_`abc"), "rdma-ping-0: XYZ[\\]^_`abc");
  EXPECT_EQ(fabric::printable("a\x1b[2Jb\n\xff"), "a\\x1b[2Jb\\x0a\\xff");
  EXPECT_EQ(fabric::printable(std::string_view("\0z", 2)), "\\x00z");
}

TEST(text, utf8_text_stays_itself_and_only_what_controls_a_terminal_is_escaped) {
  EXPECT_EQ(fabric::printable_utf8("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5"), "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x94\xa5");
  EXPECT_EQ(fabric::printable("caf\xc3\xa9"), "caf\\xc3\\xa9") << "printable stays ASCII";
  // Control characters (C0, DEL, C1), bytes that are not UTF-8 (a stray
  // byte, an overlong form, a surrogate, a sequence cut off), and marks
  // that reorder a line (U+202E) or break it (U+2028).
  EXPECT_EQ(fabric::printable_utf8("a\x1b[2Jb\n\x7f"), "a\\x1b[2Jb\\x0a\\x7f");
  EXPECT_EQ(fabric::printable_utf8("\xc2\x9b" "1m"), "\\xc2\\x9b" "1m");
  EXPECT_EQ(fabric::printable_utf8("\xff\xc0\xaf\xed\xa0\x80\xe6\x97"), "\\xff\\xc0\\xaf\\xed\\xa0\\x80\\xe6\\x97");
  EXPECT_EQ(fabric::printable_utf8("abc\xe2\x80\xaegpj.exe \xe2\x80\xa8"), "abc\\xe2\\x80\\xaegpj.exe \\xe2\\x80\\xa8");
  EXPECT_EQ(fabric::printable_utf8(std::string_view("\0z", 2)), "\\x00z");
  auto once = fabric::printable_utf8("x\xff\x1b\xc3\xa9");
  EXPECT_EQ(fabric::printable_utf8(once), once) << "escaping twice changes nothing";
  EXPECT_EQ(fabric::columns("caf\xc3\xa9"), 4u);
  EXPECT_EQ(fabric::columns("\xe6\x97\xa5\xe6\x9c\xac"), 4u) << "a wide character is two columns";
  EXPECT_EQ(fabric::columns(""), 0u);
  EXPECT_EQ(fabric::utf8_sequence(""), 0u);
  EXPECT_EQ(fabric::utf8_sequence("\xf0\x9f\x94\xa5!"), 4u);
}

TEST(text, a_long_message_keeps_its_head_and_tail_within_its_bound) {
  EXPECT_EQ(fabric::shortened("short", 1024), "short");
  std::string quoted = "--count: " + std::string(100000, '7') + " is out of range 0-1073741824";
  auto cut = fabric::shortened(quoted, 1024);
  EXPECT_EQ(cut.size(), 1024U);
  EXPECT_TRUE(cut.starts_with("--count: 777"));
  EXPECT_TRUE(cut.ends_with("777 is out of range 0-1073741824"));
  auto left_out = quoted.size() - (1024 - std::string(" [98998 bytes left out] ").size());
  EXPECT_NE(cut.find(fmt::format(" [{} bytes left out] ", left_out)), std::string::npos) << cut;
}

TEST(text, a_count_of_one_is_singular_any_other_plural) {
  EXPECT_EQ(fabric::counted(1, "line"), "1 line");
  EXPECT_EQ(fabric::counted(0, "line"), "0 lines");
  EXPECT_EQ(fabric::counted(28, "pair line"), "28 pair lines");
  EXPECT_EQ(fabric::counted(2, "run has", "runs have"), "2 runs have");
  EXPECT_EQ(fabric::counted(1, "run has", "runs have"), "1 run has");
}

TEST(text, a_whole_number_is_decimal_digits_alone_within_its_type) {
  EXPECT_EQ(fabric::whole_number<int>("0"), 0);
  EXPECT_EQ(fabric::whole_number<long>("0018515"), 18515);
  EXPECT_EQ(fabric::whole_number<unsigned>("4294967295"), 4294967295U);
  using namespace std::string_view_literals;
  for (auto bad : {""sv, "-1"sv, "+1"sv, " 1"sv, "1 "sv, "1x"sv, "0x10"sv, "4294967296"sv, "\xff"sv, "1\0"sv})
    EXPECT_FALSE(fabric::whole_number<unsigned>(bad)) << fabric::printable(bad);
  EXPECT_FALSE(fabric::whole_number<int>("2147483648"));
}

namespace {

/// What cli::run printed on stdout (a JSON document) and returned, for a
/// tool with `render` and `results`, run as `tool -j`.
struct json_run {
  nlohmann::json doc;
  int rc = 0;
};

json_run run_json(const std::function<void(nlohmann::json&)>& render, const fabric::result_source& results = {},
                  std::vector<std::string> args = {"-j"}) {
  CLI::App app;
  fabric::cli::output_options out;
  fabric::cli::add_output_options(app, out);
  std::string file;
  app.add_option("--out", file);
  app.add_option("input", file);
  argv_of a(std::move(args));
  testing::internal::CaptureStdout();
  int rc = fabric::cli::run({.name = "tool", .validate = {}, .body = [](fabric::console&) { return fabric::verdict{}; }, .render = render},
                            app, a.argc(), a.argv(), out, results);
  return {nlohmann::json::parse(testing::internal::GetCapturedStdout()), rc};
}

}  // namespace

TEST(cli, a_report_that_cannot_be_rendered_fails_the_run_and_its_exit_code) {
  auto r = run_json([](nlohmann::json&) { throw std::runtime_error("no figures"); });
  EXPECT_EQ(r.rc, 8);
  EXPECT_EQ(r.doc["exit_code"], 8);
  EXPECT_EQ(r.doc["ok"], false);
  EXPECT_EQ(r.doc["error"], "cannot render the report: no figures");
}

TEST(cli, results_whose_source_fails_midway_fail_the_run_and_say_so) {
  auto r = run_json([](nlohmann::json& j) { j["summary"] = nlohmann::json::object(); },
                    [](const fabric::result_sink& each) {
                      each({{"kind", "check"}, {"index", 0}});
                      throw std::runtime_error("out of figures");
                    });
  EXPECT_EQ(r.rc, 8);
  ASSERT_EQ(r.doc["results"].size(), 1u);
  EXPECT_EQ(r.doc["exit_code"], 8);
  EXPECT_EQ(r.doc["ok"], false);
  EXPECT_EQ(r.doc["error"], "the results could not all be written: out of figures");
}

TEST(cli, an_empty_value_is_a_usage_error_and_never_takes_the_next_argument) {
  auto no_render = [](nlohmann::json&) {};
  auto r = run_json(no_render, {}, {"-j", "--out=", "sweep.jsonl"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.doc["error"], "--out: the value after '=' is empty");
  r = run_json(no_render, {}, {"-j", "--out", "", "sweep.jsonl"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.doc["error"], "--out: an empty value");
  r = run_json(no_render, {}, {"-j", "--", ""});
  EXPECT_EQ(r.rc, 0) << "after --, an argument is the tool's to judge";
}

namespace {

/// What an option with validator `v` makes of `text`: the value it
/// receives, or the validator's message prefixed "error: ".
std::string read_with(const CLI::Validator& v, std::string text) {
  CLI::App app;
  std::string got;
  app.add_option("-n", got)->transform(v);
  try {
    app.parse(std::vector<std::string>{text, "-n"});
  } catch (const CLI::ParseError& e) {
    return std::string("error: ") + e.what();
  }
  return got;
}

}  // namespace

TEST(cli, counts_and_sizes_are_decimal_as_rdma_core_reads_them) {
  auto count = fabric::cli::decimal(0, 1000);
  EXPECT_EQ(read_with(count, "010"), "10") << "atoi reads a leading zero as decimal";
  EXPECT_EQ(read_with(count, " +7 "), "7");
  EXPECT_EQ(read_with(count, "0"), "0");
  EXPECT_EQ(read_with(count, "0x10"), "error: -n: '0x10' is not a whole number (0-1000)");
  EXPECT_EQ(read_with(count, "5x"), "error: -n: '5x' is not a whole number (0-1000)");
  EXPECT_EQ(read_with(count, "-1"), "error: -n: '-1' is not a whole number (0-1000)");
  EXPECT_EQ(read_with(count, "1e2"), "error: -n: '1e2' is not a whole number (0-1000)");
  EXPECT_EQ(read_with(count, "1001"), "error: -n: 1001 is out of range 0-1000");
  EXPECT_EQ(read_with(count, "99999999999999999999999"), "error: -n: 99999999999999999999999 is out of range 0-1000");
  EXPECT_EQ(read_with(count, "1\x1b[2J"), "error: -n: '1\\x1b[2J' is not a whole number (0-1000)");
}

TEST(cli, a_c_number_is_decimal_hex_or_octal_as_strtoul_reads_it) {
  auto n = fabric::cli::c_number(0, 31);
  EXPECT_EQ(read_with(n, "0x10"), "16");
  EXPECT_EQ(read_with(n, "010"), "8");
  EXPECT_EQ(read_with(n, "0"), "0");
  EXPECT_EQ(read_with(n, "19"), "19");
  EXPECT_EQ(read_with(n, "0x"), "error: -n: '0x' is not a whole number (decimal, 0x hex or 0 octal) (0-31)");
  EXPECT_EQ(read_with(n, "09"), "error: -n: '09' is not a whole number (decimal, 0x hex or 0 octal) (0-31)");
  EXPECT_EQ(read_with(n, "0x20"), "error: -n: 0x20 is out of range 0-31");
}

TEST(cli, a_real_option_is_a_finite_number_within_its_range) {
  auto r = fabric::cli::real(0.01, 1.0);
  EXPECT_EQ(read_with(r, "0.5"), "0.5");
  EXPECT_EQ(read_with(r, "nan"), "error: -n: 'nan' is not a number (0.01-1)");
  EXPECT_EQ(read_with(r, "inf"), "error: -n: 'inf' is not a number (0.01-1)");
  EXPECT_EQ(read_with(r, "0.5x"), "error: -n: '0.5x' is not a number (0.01-1)");
  EXPECT_EQ(read_with(r, "2"), "error: -n: 2 is out of range 0.01-1");
}
