// fabric-sweep report at scale and against hostile input: the line reader,
// runs, the bw check, and the renderings (CSV, the pairs to run again, the
// page, the gauges). The verdict's rules: sweep_verdict_test.cpp.
#include "fabric-sweep/report/report.hpp"

#include "fabric/base/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace {

using sweep::pair_state;
const sweep::verdict_options defaults{};

/// A pair line as a rank prints it; `extra` is merged into the pair.
std::string line(const std::string& server, const std::string& client, bool ok, double p50,
                 const nlohmann::json& extra = nlohmann::json::object(), const std::string& side = "client") {
  nlohmann::json pair{{"kind", "pair"}, {"ok", ok}, {"error", ok ? nlohmann::json(nullptr) : nlohmann::json("timed out")},
                      {"round", 1}, {"sweep", 1}, {"retest", false}, {"server", server}, {"client", client}, {"side", side},
                      {"check", "ping"}};
  if (ok && side == "client") pair["latency"] = {{"count", 10}, {"p50_us", p50}, {"p99_us", p50 * 1.2}};
  for (auto& [k, v] : extra.items()) pair[k] = v;
  return nlohmann::json{{"tool", "fabric-sweep"}, {"event", "result"}, {"result", pair}}.dump();
}

const sweep::merged_pair& pair_of(const sweep::matrix& m, const std::string& a, const std::string& b) {
  auto i = std::find(m.hosts.begin(), m.hosts.end(), a) - m.hosts.begin();
  auto k = std::find(m.hosts.begin(), m.hosts.end(), b) - m.hosts.begin();
  return m.pair_of(static_cast<std::size_t>(i), static_cast<std::size_t>(k));
}

bool has_note(const sweep::matrix& m, std::string_view text) {
  return std::any_of(m.notes.begin(), m.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

TEST(sweep_report_hostile, deep_nesting_is_a_skipped_line_not_a_crash) {
  std::string deep = "{\"tool\":\"fabric-sweep\",\"event\":\"pair\",\"pair\":" + std::string(200000, '[') + std::string(200000, ']') + "}";
  auto m = sweep::merge({deep, std::string(300000, '{'), line("a", "b", true, 10)}, defaults);
  EXPECT_EQ(m.count(pair_state::ok), 1u);
  EXPECT_FALSE(m.notes.empty());
}

TEST(sweep_report_hostile, a_malformed_pair_line_is_skipped_and_counted) {
  auto bad = [](const nlohmann::json& pair) {
    return nlohmann::json{{"tool", "fabric-sweep"}, {"event", "result"}, {"result", pair}}.dump();
  };
  auto j = nlohmann::json::parse(line("a", "c", true, 10));
  auto p50_null = j;
  p50_null["result"]["latency"]["p50_us"] = nullptr;
  auto round_text = j;
  round_text["result"]["round"] = "1";
  auto huge_round = j;
  huge_round["result"]["round"] = -1;
  std::vector<std::string> lines{bad(nullptr), bad("a pair"), p50_null.dump(), round_text.dump(), huge_round.dump(),
                                 line("a", "b", true, 10), line("b", "c", true, 11)};
  auto m = sweep::merge(lines, defaults);
  EXPECT_EQ(m.count(pair_state::ok), 2u);
  EXPECT_EQ(pair_of(m, "a", "c").state, pair_state::missing);
  EXPECT_TRUE(has_note(m, "5 pair lines of a wrong shape")) << ::testing::PrintToString(m.notes);
}

TEST(sweep_report_hostile, a_failure_whose_bytes_are_not_utf8_is_kept_and_its_bytes_escaped) {
  auto failed = line("a", "e", false, 0);
  auto at = failed.find("timed out");
  failed.replace(at, 9, "lost \xff\xfe link");
  auto host = line("a", "zq", true, 10);
  host.replace(host.find("zq"), 2, "z\xff");
  auto m = sweep::merge({failed, host, line("a", "b", true, 10)}, defaults);
  EXPECT_EQ(pair_of(m, "a", "e").state, pair_state::failed);
  EXPECT_EQ(m.error_of(pair_of(m, "a", "e")), "lost \\xff\\xfe link");
  EXPECT_NE(std::find(m.hosts.begin(), m.hosts.end(), "z\\xff"), m.hosts.end()) << ::testing::PrintToString(m.hosts);
  EXPECT_EQ(sweep::judge(m).code, fabric::exit_code::test_failed);
}

TEST(sweep_report_hostile, a_host_name_of_100_kb_is_no_hosts_and_makes_no_huge_table) {
  // One name of 100 KB among 100 hosts made a text table of 1 GB.
  std::vector<std::string> names;
  for (int i = 1; i < 100; ++i) names.push_back(fmt::format("h{}", i));
  names.push_back(std::string(100'000, 'x'));
  std::vector<std::string> lines{nlohmann::json{{"tool", "fabric-sweep"},
                                                {"event", "started"},
                                                {"started", {{"host", "h1"}, {"hosts", names}, {"peers", {names.back()}}}}}
                                     .dump()};
  for (std::size_t a = 0; a < names.size(); ++a)
    for (std::size_t b = a + 1; b < names.size(); ++b) lines.push_back(line(names[a], names[b], true, 20));
  auto m = sweep::merge(lines, defaults);
  EXPECT_EQ(m.hosts.size(), 99u);
  EXPECT_EQ(m.count(pair_state::ok), 99u * 98 / 2);
  EXPECT_TRUE(has_note(m, "99 pair lines naming a host of more than 255 bytes (no host's name is that long) were skipped"))
      << ::testing::PrintToString(m.notes);
  EXPECT_LT(sweep::format_matrix(m).size(), 100'000u);
  // A name of 255 bytes is a host's.
  auto longest = std::string(255, 'y');
  EXPECT_EQ(sweep::merge({line("a", longest, true, 20)}, defaults).hosts, (std::vector<std::string>{"a", longest}));
}

TEST(sweep_report_hostile, a_lone_surrogate_in_a_name_is_read_as_text_and_counted) {
  // "z\ud800" (no character) made simdjson refuse each line naming it: the
  // host's failed pairs were dropped and the report passed.
  auto lone = [](std::string text) {
    auto at = text.find("zq");
    return text.replace(at, 2, "z\\ud800");
  };
  auto paired = [](std::string text) {  // a surrogate pair is a character
    auto at = text.find("zq");
    return text.replace(at, 2, "y\\ud83d\\udd25");
  };
  auto m = sweep::merge({line("a", "b", true, 20), lone(line("a", "zq", false, 0)), lone(line("b", "zq", false, 0)),
                         paired(line("a", "zq", true, 20)), line("a", "e\\ud800", true, 20)},
                        defaults);
  EXPECT_NE(std::find(m.hosts.begin(), m.hosts.end(), "z\\ud800"), m.hosts.end()) << ::testing::PrintToString(m.hosts);
  EXPECT_NE(std::find(m.hosts.begin(), m.hosts.end(), "y\xf0\x9f\x94\xa5"), m.hosts.end()) << ::testing::PrintToString(m.hosts);
  EXPECT_NE(std::find(m.hosts.begin(), m.hosts.end(), "e\\ud800"), m.hosts.end()) << "an escaped backslash is no escape";
  EXPECT_EQ(pair_of(m, "a", "z\\ud800").state, pair_state::failed);
  EXPECT_EQ(sweep::judge(m).code, fabric::exit_code::test_failed);
  EXPECT_TRUE(has_note(m, "2 lines had a UTF-16 surrogate escape without its other half (\\ud800: no character), read as "
                          "that text"))
      << ::testing::PrintToString(m.notes);
  EXPECT_FALSE(has_note(m, "not the sweep's")) << ::testing::PrintToString(m.notes);
}

TEST(sweep_report_hostile, a_side_that_says_a_meeting_again_otherwise_is_noted) {
  // The same line twice (a rank's event, then its document): no note.
  auto same = sweep::merge({line("a", "b", true, 20), line("a", "b", true, 20), line("a", "b", true, 0, {}, "server"),
                            line("a", "b", true, 0, {}, "server")},
                           defaults);
  EXPECT_TRUE(same.notes.empty()) << ::testing::PrintToString(same.notes);
  // The client's word on round 1 of a-b, then other words on the same
  // meeting: other figures, and a failure. Each once gave no note.
  auto m = sweep::merge({line("a", "b", true, 20), line("a", "b", true, 90), line("a", "c", true, 20),
                         line("a", "c", false, 0), line("b", "c", false, 0), line("b", "c", false, 0, {{"error", "other"}})},
                        defaults);
  EXPECT_TRUE(has_note(m, "3 pair lines gave a side's word on a meeting of a pair again, with other words than before"))
      << ::testing::PrintToString(m.notes);
  EXPECT_EQ(pair_of(m, "a", "c").state, pair_state::failed) << "a failure of either stands";
  EXPECT_DOUBLE_EQ(pair_of(m, "a", "b").latency()->p50, 90) << "else the later figures";
}

TEST(sweep_report_hostile, a_failure_of_megabytes_is_kept_as_its_head_and_tail) {
  auto failed = line("a", "e", false, 0);
  failed.replace(failed.find("timed out"), 9, "lost " + std::string(2'000'000, 'x') + " link");
  auto m = sweep::merge({failed, line("a", "b", true, 10)}, defaults);
  auto said = m.error_of(pair_of(m, "a", "e"));
  EXPECT_EQ(said.size(), 1024u);
  EXPECT_TRUE(said.starts_with("lost xxx") && said.ends_with("xxx link")) << said;
  EXPECT_NE(said.find(" bytes left out] "), std::string::npos);
}

TEST(sweep_report_hostile, figures_no_link_can_have_are_a_wrong_shape) {
  auto m = sweep::merge({line("a", "c", true, 1.7976931348623157e308), line("a", "d", true, -1), line("a", "b", true, 10)},
                        defaults);
  EXPECT_EQ(m.count(pair_state::ok), 1u);
  EXPECT_TRUE(has_note(m, "2 pair lines of a wrong shape")) << ::testing::PrintToString(m.notes);
  EXPECT_TRUE(std::isfinite(m.bar.group.median));
}

TEST(sweep_report_hostile, a_time_past_any_calendar_is_no_time_and_the_page_is_drawn) {
  auto j = nlohmann::json::parse(line("a", "b", true, 10));
  j["time"] = 1e19;
  auto m = sweep::merge({j.dump()}, defaults);
  EXPECT_FALSE(m.run.started);
  EXPECT_NE(sweep::html_page(m).find("</html>"), std::string::npos);
}

TEST(sweep_report_hostile, the_tools_own_outliers_events_are_the_sweeps) {
  nlohmann::json outliers{{"tool", "fabric-sweep"}, {"event", "outliers"},
                          {"outliers", {{"error", nullptr}, {"retest_pairs", nlohmann::json::array()}}}};
  auto m = sweep::merge({"0: " + outliers.dump(), line("a", "b", true, 10)}, defaults);
  EXPECT_TRUE(m.notes.empty()) << ::testing::PrintToString(m.notes);
}

TEST(sweep_report_hostile, a_count_of_one_is_singular_in_every_note) {
  // "1 lines were not the sweep's": each count of one, once.
  auto malformed = nlohmann::json::parse(line("a", "c", true, 10));
  malformed["result"]["round"] = "1";
  auto orphan = nlohmann::json::parse(line("a", "b", true, 10));
  orphan["result"]["run"] = nullptr;
  auto m = sweep::merge({"not JSON", malformed.dump(), line("a", "c", true, 11), line("a", "c", true, 10, {{"check", "ud"}}),
                         orphan.dump(),
                         nlohmann::json{{"tool", "fabric-sweep"}, {"event", "started"}, {"started", {{"hosts", {"a", "b", "c"}}}}}
                             .dump()},
                        defaults);
  for (const char* said : {"1 line was not the sweep's and was skipped",
                           "1 pair line of a wrong shape (a field of the wrong type or value) was skipped",
                           "1 pair line of other checks than ping was skipped", "1 line without a run id was taken",
                           "1 of 3 pairs was reported by neither side"})
    EXPECT_TRUE(has_note(m, said)) << said << "\n" << ::testing::PrintToString(m.notes);
  for (const auto& n : m.notes)
    for (const char* plural : {"1 lines", "1 pairs", "1 pair lines", "1 hosts", "1 runs"})
      EXPECT_EQ(n.find(plural), std::string::npos) << n;
}

TEST(sweep_report_lines, over_long_lines_are_skipped_and_pieces_joined) {
  std::vector<std::string> got;
  sweep::line_joiner j([&](std::string_view, std::string_view text) { got.emplace_back(text); }, 64);
  j.feed("0: {\"a\":1}\n");
  j.feed(std::string(100, 'x') + "\n");  // longer than 64: skipped
  j.feed("1: {\"b\":");                  // a line spanning two reads
  j.feed("2}\n0: {\"c\":\n0: 3}\n");     // srun's pieces
  j.finish();
  EXPECT_EQ(got, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":3}"}));
  EXPECT_EQ(j.counts().over_long, 1u);
}

TEST(sweep_report_lines, brackets_and_quotes_inside_strings_do_not_end_a_line) {
  std::vector<std::string> got;
  sweep::line_joiner j([&](std::string_view, std::string_view text) { got.emplace_back(text); });
  j.feed("0: {\"e\":\"a } ] { [ in a string\",\"q\":\"\\\"}\\\\\"}\n");  // escaped quote, backslash
  j.feed("1: {\"e\":\"ends in a backslash \\");  // the escape spans two reads
  j.feed("\"}\",\"n\":[1,{\"x\":[]}]}  \t\n");
  j.feed("2: {\"a\":1}} \n");   // a bracket too many: foreign
  j.feed("3: {\"a\":1} x\n");   // text after the end: foreign
  j.feed("4: {\"a\":\"}\n4: \"}\n");  // srun's pieces, split inside a string
  j.feed("5: {\"a\":\"x\\\n5: \"}\"}\n");  // and right after a backslash
  j.finish();
  EXPECT_EQ(got, (std::vector<std::string>{"{\"e\":\"a } ] { [ in a string\",\"q\":\"\\\"}\\\\\"}",
                                           "{\"e\":\"ends in a backslash \\\"}\",\"n\":[1,{\"x\":[]}]}  \t",
                                           "{\"a\":\"}\"}", "{\"a\":\"x\\\"}\"}"}));
  EXPECT_EQ(j.counts().foreign, 2u);
}

TEST(sweep_report_runs, the_latest_run_is_kept_and_an_old_failure_does_not_stick) {
  auto in_run = [](const std::string& text, const char* run, double t) {
    auto j = nlohmann::json::parse(text);
    j["time"] = t;
    if (run) j["result"]["run"] = run;
    else j["result"]["run"] = nullptr;
    return j.dump();
  };
  std::vector<std::string> lines{
      in_run(line("a", "b", false, 0), "r1", 100), in_run(line("a", "c", true, 10), "r1", 100),
      in_run(line("b", "c", true, 10), "r1", 101),
      in_run(line("a", "b", true, 10), "r2", 200), in_run(line("a", "c", true, 11), "r2", 200),
      in_run(line("b", "c", false, 0), nullptr, 150),  // no run, older than r2: r1's
      in_run(line("b", "c", true, 12), nullptr, 201),  // no run, in r2's time: r2's
  };
  auto m = sweep::merge(lines, defaults);
  EXPECT_EQ(m.count(pair_state::ok), 3u) << "r1's failure of a-b does not stick";
  ASSERT_TRUE(m.run.id);
  EXPECT_EQ(*m.run.id, "r2");
  EXPECT_EQ(m.run.earlier_runs, 1u);
  EXPECT_EQ(m.run.earlier_lines, 4u);
  EXPECT_TRUE(has_note(m, "the latest run (r2) is reported: 4 lines of 1 earlier run were skipped"))
      << ::testing::PrintToString(m.notes);
  // Lines of a version without runs: one unnamed run, as before.
  auto old = sweep::merge({line("a", "b", true, 10)}, defaults);
  EXPECT_FALSE(old.run.id);
  EXPECT_EQ(old.run.earlier_runs, 0u);
}

/// A pair line of run `run` at unix time `t`.
std::string timed(const std::string& text, const char* run, double t) {
  auto j = nlohmann::json::parse(text);
  j["time"] = t;
  j["result"]["run"] = run;
  return j.dump();
}

/// A rank's document of run `run`, without a time (printed with -j), its
/// results these pair lines' pairs.
std::string document(const char* run, const std::vector<std::string>& pairs) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& p : pairs) results.push_back(nlohmann::json::parse(p)["result"]);
  return nlohmann::json{{"tool", "fabric-sweep"}, {"role", "rank"},     {"ok", true},
                        {"error", nullptr},       {"results", results}, {"summary", {{"run", run}}}}
      .dump();
}

std::string started_at(const char* run, double t) {
  return nlohmann::json{{"tool", "fabric-sweep"},
                        {"event", "started"},
                        {"time", t},
                        {"started", {{"run", run}, {"host", "a"}, {"hosts", {"a", "b", "c"}}}}}
      .dump();
}

TEST(sweep_report_runs, a_document_without_a_time_borrows_none_from_another_input_or_run) {
  // report new.jsonl old-docs.jsonl: the new run's lines, then the old
  // run's documents saved with -j (no time). They once took the new run's
  // start, and the old run was reported as the latest.
  std::vector<std::string> fresh{started_at("r2", 2000), timed(line("a", "b", true, 10), "r2", 2001),
                                 timed(line("a", "c", true, 10), "r2", 2001), timed(line("b", "c", true, 10), "r2", 2002)};
  std::vector<std::string> old{document("r1", {line("a", "b", false, 0), line("a", "c", true, 10)}),
                               document("r1", {line("b", "c", false, 0)})};
  auto m = sweep::merge_inputs({fresh, old}, defaults);
  ASSERT_TRUE(m.run.id);
  EXPECT_EQ(*m.run.id, "r2");
  EXPECT_EQ(m.run.started, 2000);
  EXPECT_EQ(m.run.earlier_runs, 1u);
  EXPECT_EQ(m.count(pair_state::ok), 3u);
  // One input, one label, the two runs' lines interleaved: the new run's
  // document is as old as its own last event, not the old run's.
  auto interleaved = sweep::merge({"0: " + started_at("r2", 200), "0: " + timed(line("a", "b", true, 10), "r1", 100),
                                   "0: " + document("r2", {line("a", "b", false, 0)})},
                                  defaults);
  ASSERT_TRUE(interleaved.run.id);
  EXPECT_EQ(*interleaved.run.id, "r2");
  EXPECT_EQ(pair_of(interleaved, "a", "b").state, pair_state::failed);
}

TEST(sweep_report_runs, a_later_run_without_pair_lines_yet_is_not_an_earlier_one) {
  // r2 has started (its started events came) and no pair has ended yet:
  // r1's pairs are reported, and r2 is named for what it is.
  auto m = sweep::merge({timed(line("a", "b", true, 10), "r1", 100), timed(line("a", "c", true, 10), "r1", 100),
                         timed(line("b", "c", true, 10), "r1", 101), started_at("r2", 200), started_at("r2", 200)},
                        defaults);
  ASSERT_TRUE(m.run.id);
  EXPECT_EQ(*m.run.id, "r1");
  EXPECT_EQ(m.run.earlier_runs, 0u);
  EXPECT_EQ(m.run.later_runs, 1u);
  EXPECT_FALSE(has_note(m, "earlier")) << ::testing::PrintToString(m.notes);
  EXPECT_TRUE(has_note(m, "1 later run (r2) has no ping pair lines (a sweep under way, or another check's): its 2 lines "
                          "were skipped"))
      << ::testing::PrintToString(m.notes);
}

/// The worst hosts of a fleet of `n` hosts h1..hn whose bad pairs are `bad`.
std::vector<std::pair<std::string, int>> worst_of(int n, const std::set<std::pair<int, int>>& bad) {
  std::vector<std::string> lines;
  for (int a = 1; a <= n; ++a)
    for (int b = a + 1; b <= n; ++b)
      lines.push_back(line(fmt::format("h{}", a), fmt::format("h{}", b), !bad.contains({a, b}), 20));
  return sweep::merge(lines, defaults).worst;
}

TEST(sweep_report_worst, the_fewest_hosts_that_account_for_the_bad_pairs) {
  using named = std::vector<std::pair<std::string, int>>;
  // A dead host among 40: it alone, not its 39 peers with one bad pair each.
  std::set<std::pair<int, int>> dead;
  for (int k = 1; k <= 40; ++k)
    if (k != 7) dead.insert({std::min(k, 7), std::max(k, 7)});
  EXPECT_EQ(worst_of(40, dead), (named{{"h7", 39}}));
  // Two dead hosts: both, each peer's two bad pairs accounted for by them.
  auto two = dead;
  for (int k = 1; k <= 40; ++k)
    if (k != 9) two.insert({std::min(k, 9), std::max(k, 9)});
  EXPECT_EQ(worst_of(40, two), (named{{"h7", 39}, {"h9", 39}}));
  // One bad link: the link's, no host's (its line names it).
  EXPECT_EQ(worst_of(6, {{2, 5}}), named{});
  // A host in two bad pairs is named; a triangle names its three hosts.
  EXPECT_EQ(worst_of(6, {{2, 5}, {2, 6}}), (named{{"h2", 2}}));
  EXPECT_EQ(worst_of(6, {{1, 2}, {2, 3}, {1, 3}}), (named{{"h1", 2}, {"h2", 2}, {"h3", 2}}));
}

TEST(sweep_report_worst, a_big_fleet_gets_its_lines_not_a_table_no_terminal_shows) {
  // 150 hosts, h7 failing with each peer for a reason of its own: no
  // table, the first failed pairs named and the rest counted, and h7 alone
  // the worst host.
  std::vector<std::string> lines;
  for (int a = 1; a <= 150; ++a)
    for (int b = a + 1; b <= 150; ++b)
      lines.push_back(line(fmt::format("h{}", a), fmt::format("h{}", b), a != 7 && b != 7, 20,
                           {{"error", fmt::format("reason {}", a + b)}}));
  auto text = sweep::format_matrix(sweep::merge(lines, defaults));
  EXPECT_EQ(text.rfind("150 hosts, check ping: no table above 100 hosts", 0), 0u) << text.substr(0, 200);
  std::istringstream in(text);
  std::size_t failed_lines = 0;
  for (std::string l; std::getline(in, l);) failed_lines += l.rfind("failed: h", 0) == 0 ? 1 : 0;
  EXPECT_EQ(failed_lines, sweep::pair_lines_up_to);
  EXPECT_NE(text.find("\nfailed: 49 more pairs (--csv, -j)\n"), std::string::npos);
  EXPECT_NE(text.find("\nworst hosts: h7 (149)\n"), std::string::npos);
  EXPECT_LT(text.size(), 10'000u);
}

TEST(sweep_report_worst, a_dead_hosts_failed_pairs_are_one_line) {
  // 200 hosts, h7 dead (every pair the same error), one bad link h1-h2
  // and three pairs of h9 (too few to fold): h7's line, then the others'.
  std::vector<std::string> lines;
  for (int a = 1; a <= 200; ++a)
    for (int b = a + 1; b <= 200; ++b) {
      bool bad = a == 7 || b == 7 || (a == 1 && b == 2) || (a == 9 && b <= 12);
      lines.push_back(line(fmt::format("h{}", a), fmt::format("h{}", b), !bad, 20));
    }
  auto text = sweep::format_matrix(sweep::merge(lines, defaults));
  std::vector<std::string> failed;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("failed: ", 0) == 0) failed.push_back(l);
  EXPECT_EQ(failed, (std::vector<std::string>{"failed: h7 <-> 199 hosts: timed out", "failed: h1 <-> h2: timed out",
                                              "failed: h9 <-> h10: timed out", "failed: h9 <-> h11: timed out",
                                              "failed: h9 <-> h12: timed out"}))
      << text;
}

/// The lines of `text` that start with `head`.
std::vector<std::string> lines_of(const std::string& text, std::string_view head) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.starts_with(head)) out.push_back(l);
  return out;
}

TEST(sweep_report_worst, above_100_hosts_a_lone_slow_link_is_named) {
  // 150 hosts, one slow link: the lines once said only "1 slow".
  std::vector<std::string> lines;
  for (int a = 1; a <= 150; ++a)
    for (int b = a + 1; b <= 150; ++b)
      lines.push_back(line(fmt::format("h{}", a), fmt::format("h{}", b), true, a == 3 && b == 100 ? 200 : 20));
  auto text = sweep::format_matrix(sweep::merge(lines, defaults));
  EXPECT_EQ(lines_of(text, "slow: "), (std::vector<std::string>{"slow: h3 <-> h100: p50 200.0 us"})) << text;
}

TEST(sweep_report_worst, a_slow_hosts_pairs_are_one_line_and_the_rest_capped) {
  // 250 hosts: h7 slow with each peer, and 120 slow links apart from it
  // (h10-h11, h12-h13, ...): h7's line, then 99 links, the rest counted.
  std::vector<std::string> lines;
  for (int a = 1; a <= 250; ++a)
    for (int b = a + 1; b <= 250; ++b) {
      bool slow = a == 7 || b == 7 || (a >= 10 && a % 2 == 0 && b == a + 1);
      lines.push_back(line(fmt::format("h{}", a), fmt::format("h{}", b), true, slow ? 200 + (a + b) % 5 : 20));
    }
  auto m = sweep::merge(lines, defaults);
  ASSERT_EQ(m.count(pair_state::slow), 249u + 120);
  auto slow = lines_of(sweep::format_matrix(m), "slow: ");
  ASSERT_EQ(slow.size(), sweep::pair_lines_up_to + 1);
  EXPECT_EQ(slow[0], "slow: h7 <-> 249 hosts: p50 200.0 to 204.0 us");
  EXPECT_EQ(slow[1], "slow: h10 <-> h11: p50 201.0 us");
  EXPECT_EQ(slow.back(), "slow: 21 more pairs (--csv, -j)");
}

TEST(sweep_report_plan, a_pair_of_a_host_outside_the_host_lists_is_skipped_and_counted) {
  // The ranks name four hosts; a line names zz too. It made a fifth host,
  // three made-up missing pairs, zz the worst host and a failed report.
  auto started = [](const std::string& host) {
    return nlohmann::json{{"tool", "fabric-sweep"},
                          {"event", "started"},
                          {"started", {{"host", host}, {"hosts", {"a", "b", "c", "d"}}}}}
        .dump();
  };
  std::vector<std::string> lines{started("a"), started("b")};
  for (const auto& [x, y] : {std::pair{"a", "b"}, {"a", "c"}, {"a", "d"}, {"b", "c"}, {"b", "d"}, {"c", "d"}})
    lines.push_back(line(x, y, true, 20));
  lines.push_back(line("a", "zz", false, 0));
  lines.push_back(line("zz", "yy", true, 20));
  auto m = sweep::merge(lines, defaults);
  EXPECT_EQ(m.hosts, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(m.count(pair_state::ok), 6u);
  EXPECT_EQ(m.count(pair_state::missing) + m.count(pair_state::failed), 0u);
  EXPECT_TRUE(m.worst.empty());
  EXPECT_EQ(sweep::judge(m).code, fabric::exit_code::ok);
  EXPECT_TRUE(has_note(m, "2 pairs naming hosts outside the ranks' host lists (zz, yy) were skipped"))
      << ::testing::PrintToString(m.notes);
  // Lines without host lists (of versions before them) name the hosts.
  auto bare = sweep::merge({line("a", "b", true, 20), line("a", "zz", false, 0)}, defaults);
  EXPECT_EQ(bare.hosts.size(), 3u);
}

TEST(sweep_report_plan, a_quick_run_judges_only_the_pairs_it_meant_to_meet) {
  // --quick over a, b, c, d, e: a-c and b-d, then b-e in a round of its
  // own. d died before it said anything: b's plan still names the pair,
  // so it fails.
  auto started = [](const std::string& host, const nlohmann::json& peers) {
    return nlohmann::json{{"tool", "fabric-sweep"},
                          {"event", "started"},
                          {"started", {{"host", host}, {"hosts", {"a", "b", "c", "d", "e"}}, {"peers", peers}}}}
        .dump();
  };
  std::vector<std::string> lines{started("a", {"c"}), started("b", {"d", "e"}), started("c", {"a"}),
                                 started("e", {"b"}), line("a", "c", true, 20),
                                 line("b", "d", false, 0, nlohmann::json::object(), "server"), line("b", "e", true, 20)};
  auto m = sweep::merge(lines, defaults);
  ASSERT_EQ(m.hosts.size(), 5u);
  EXPECT_EQ(m.planned(), 3u);
  EXPECT_EQ(m.count(pair_state::ok), 2u);
  EXPECT_EQ(m.count(pair_state::failed), 1u);
  EXPECT_EQ(m.count(pair_state::missing), 0u) << "the pairs no rank planned are not missing";
  EXPECT_EQ(pair_of(m, "a", "b").state, pair_state::unplanned);
  EXPECT_EQ(pair_of(m, "c", "e").state, pair_state::unplanned);
  EXPECT_EQ(sweep::judge(m).reason, "1 failed, 0 slow, 0 missing of 3 pairs");
  std::vector<nlohmann::json> results;
  sweep::each_result(m, [&](const nlohmann::json& r) { results.push_back(r); });
  ASSERT_EQ(results.size(), 3u) << "only the planned pairs";
  EXPECT_EQ(results[1]["state"], "failed");
  EXPECT_NE(sweep::format_matrix(m).find(", . not in the plan"), std::string::npos);
  auto csv = sweep::csv_text(m);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4) << "a header and the planned pairs: " << csv;
  // Without a plan (every rank meets every other), an unreported pair is missing.
  auto full = sweep::merge({line("a", "c", true, 20), line("b", "d", true, 20), line("a", "b", true, 20)}, defaults);
  EXPECT_EQ(full.count(pair_state::missing), 3u);
  EXPECT_EQ(full.count(pair_state::unplanned), 0u);
}

TEST(sweep_report_multicast, a_pair_heard_by_one_side_only_does_not_pass) {
  auto mc = [](const std::string& s, const std::string& c, const std::string& side) {
    return line(s, c, true, 0, {{"check", "multicast"}}, side);
  };
  auto m = sweep::merge({mc("a", "b", "server"), mc("a", "b", "client"), mc("a", "c", "server")}, defaults);
  EXPECT_EQ(pair_of(m, "a", "b").state, pair_state::ok);
  const auto& one = pair_of(m, "a", "c");
  EXPECT_EQ(one.state, pair_state::failed);
  EXPECT_EQ(m.error_of(one), "only a reported the pair; each must have heard the other");
}

TEST(sweep_report_multicast, no_latency_figures_no_fleet_median_and_a_missing_pair_has_no_round) {
  auto mc = [](const std::string& s, const std::string& c, const std::string& side) {
    return line(s, c, true, 0, {{"check", "multicast"}, {"latency", nullptr}}, side);
  };
  auto m = sweep::merge({mc("a", "b", "server"), mc("a", "b", "client"), mc("b", "c", "server"), mc("b", "c", "client"),
                         mc("a", "c", "server"), mc("a", "c", "client"),
                         nlohmann::json{{"tool", "fabric-sweep"}, {"event", "started"},
                                        {"started", {{"hosts", {"a", "b", "c", "d"}}}}}.dump()},
                        defaults);
  EXPECT_FALSE(m.latency_measured());
  nlohmann::json doc;
  sweep::to_json(doc, sweep::options{}, m);
  EXPECT_TRUE(doc["summary"]["median_p50_us"].is_null());
  EXPECT_TRUE(doc["summary"]["mad_us"].is_null());
  EXPECT_EQ(sweep::format_matrix(m).find("median p50"), std::string::npos);
  std::size_t missing = 0;
  sweep::each_result(m, [&](const nlohmann::json& r) {
    if (r["state"] != "missing") return;
    ++missing;
    EXPECT_TRUE(r["round"].is_null() && r["sweep"].is_null()) << r.dump();
  });
  EXPECT_EQ(missing, 3u);
}

/// A bw pair line: the server's side to the client at `down`, back at `up` (Gb/s).
std::string bw_line(const std::string& s, const std::string& c, std::optional<double> to_client, std::optional<double> to_server) {
  auto dir = [](std::optional<double> g) {
    return g ? nlohmann::json{{"bytes", static_cast<std::uint64_t>(*g * 1e9 / 8)}, {"elapsed_us", 1e6}, {"gbps", *g}}
             : nlohmann::json(nullptr);
  };
  return line(s, c, true, 0,
              {{"check", "bw"}, {"latency", nullptr},
               {"bandwidth", {{"server_to_client", dir(to_client)}, {"client_to_server", dir(to_server)}}}});
}

TEST(sweep_report_lines, lines_of_earlier_versions_are_read_as_before) {
  // Earlier versions: the start event "sweep", a pair's event "pair", a bw
  // direction's time in "seconds".
  auto earlier = [](const std::string& text) {
    auto j = nlohmann::json::parse(text);
    j["event"] = "pair";
    j["pair"] = j["result"];
    j.erase("result");
    if (j["pair"].contains("bandwidth"))
      for (auto& [way, d] : j["pair"]["bandwidth"].items())
        if (!d.is_null()) {
          d["seconds"] = d["elapsed_us"].get<double>() / 1e6;
          d.erase("elapsed_us");
        }
    return j.dump();
  };
  auto start = nlohmann::json{{"tool", "fabric-sweep"}, {"event", "sweep"}, {"sweep", {{"hosts", {"a", "b", "c"}}}}}.dump();
  auto m = sweep::merge({start, earlier(bw_line("a", "b", 95, 94))}, defaults);
  EXPECT_EQ(m.hosts.size(), 3u);  // c came only in the start event
  const auto& ab = pair_of(m, "a", "b");
  EXPECT_EQ(ab.state, pair_state::ok);
  ASSERT_TRUE(ab.a_to_b());
  EXPECT_DOUBLE_EQ(ab.a_to_b()->seconds, 1.0);
  EXPECT_DOUBLE_EQ(ab.a_to_b()->gbps, 95);
}

TEST(sweep_report_bw, a_directional_matrix_judged_by_the_lower_direction) {
  std::vector<std::string> lines{bw_line("a", "b", 95, 94), bw_line("a", "c", 96, 60),  // c to a is slow
                                 bw_line("b", "c", 95, std::nullopt),                  // unidirectional
                                 bw_line("a", "d", 94, 95), bw_line("b", "d", 96, 95), bw_line("c", "d", 95, 96)};
  auto m = sweep::merge(lines, defaults);
  EXPECT_EQ(m.check, sweep::check::bw);
  EXPECT_DOUBLE_EQ(m.bar.group.median, 95) << "the healthy pairs' median: 94, 94, 95, 95, 95 without 60";
  const auto& ac = pair_of(m, "a", "c");
  EXPECT_EQ(ac.state, pair_state::slow);
  EXPECT_DOUBLE_EQ(*ac.figure(), 60);
  EXPECT_DOUBLE_EQ(ac.a_to_b()->gbps, 96);
  EXPECT_DOUBLE_EQ(ac.b_to_a()->gbps, 60);
  EXPECT_FALSE(pair_of(m, "b", "c").b_to_a());
  auto table = sweep::format_matrix(m);
  EXPECT_NE(table.find("60.0!"), std::string::npos) << table;
  EXPECT_NE(table.find("    .") , std::string::npos) << table;
  // What the fabric should do: every pair below --bw-fraction of it is slow.
  sweep::verdict_options expect;
  expect.expect_gbps = 110;
  auto expected = sweep::merge(lines, expect);
  EXPECT_EQ(expected.count(pair_state::slow), 6u);
  EXPECT_NE(sweep::format_matrix(expected).find("; slow below 102.3 Gb/s: 0.93 of the expected 110.0 Gb/s\n"),
            std::string::npos)
      << sweep::format_matrix(expected);
  nlohmann::json doc;
  sweep::options opt;
  opt.mode = sweep::mode::report;
  sweep::to_json(doc, opt, m);
  EXPECT_FALSE(doc.contains("results")) << "written one at a time, as the document is";
  sweep::each_result(m, [&](const nlohmann::json& r) { doc["results"].push_back(r); });
  EXPECT_EQ(doc["summary"]["bar"]["by"], "fleet");
  EXPECT_DOUBLE_EQ(doc["summary"]["bar"]["healthy_median_gbps"].get<double>(), 95);
  EXPECT_EQ(doc["summary"]["bar"]["healthy_pairs"], 5) << "the pair at 60 is a group of its own";
  EXPECT_TRUE(doc["summary"]["bar"]["healthy_median_us"].is_null());
  EXPECT_DOUBLE_EQ(doc["results"][1]["bandwidth"]["bar_gbps"].get<double>(), doc["summary"]["bar"]["bar_gbps"].get<double>());
  EXPECT_DOUBLE_EQ(doc["results"][1]["bandwidth"]["b_to_a"]["gbps"].get<double>(), 60);
}

TEST(sweep_report_bw, a_fleet_of_emulated_guests_is_judged_by_its_own_noise) {
  // One host below its rate: it is the worst host.
  std::vector<std::string> one_bad{bw_line("a", "b", 95, 94), bw_line("a", "c", 96, 95), bw_line("a", "d", 24, 95),
                                   bw_line("b", "c", 95, 96), bw_line("b", "d", 24, 95), bw_line("c", "d", 24, 96)};
  auto m = sweep::merge(one_bad, defaults);
  EXPECT_EQ(m.count(pair_state::slow), 3u);
  ASSERT_FALSE(m.worst.empty());
  EXPECT_EQ(m.worst[0].first, "d");
  // Emulated guests: healthy pairs from 0.03 to 0.06 Gb/s, none below its
  // rate: 0.93 of their middle would flag pairs of every host; their own
  // noise lowers the bar below them.
  std::vector<std::string> noisy{bw_line("a", "b", 0.048, 0.032), bw_line("a", "c", 0.043, 0.030),
                                 bw_line("a", "d", 0.052, 0.058), bw_line("b", "c", 0.047, 0.043),
                                 bw_line("b", "d", 0.034, 0.037), bw_line("c", "d", 0.034, 0.036)};
  auto wide = sweep::merge(noisy, defaults);
  EXPECT_EQ(wide.count(pair_state::slow), 0u);
  auto table = sweep::format_matrix(wide);
  EXPECT_NE(table.find(" 0.032 "), std::string::npos) << "figures below 1 Gb/s keep their digits\n" << table;
  EXPECT_NE(table.find("lowered to their own spread"), std::string::npos) << table;
  // With an expectation, the admin said what is slow.
  sweep::verdict_options expect = defaults;
  expect.expect_gbps = 0.04;
  auto told = sweep::merge(noisy, expect);
  EXPECT_EQ(told.count(pair_state::slow), 4u) << sweep::format_matrix(told);
}

TEST(sweep_report_bw, the_report_judges_as_the_sweep_did_unless_told_otherwise) {
  // A sweep run with --bw-fraction 0.2 (a fleet known to vary): its ranks'
  // documents say so, and the report judges by it, as rank 0 did.
  auto document = [](const std::string& host, const nlohmann::json& fraction, const nlohmann::json& expect = nullptr) {
    return nlohmann::json{{"tool", "fabric-sweep"}, {"role", "rank"}, {"host", host}, {"ok", true}, {"error", nullptr},
                          {"options", {{"outlier_factor", 2.5}, {"bw_fraction", fraction}, {"expect_gbps", expect}}},
                          {"results", nlohmann::json::array()}}
        .dump();
  };
  std::vector<std::string> lines{bw_line("a", "b", 95, 94), bw_line("a", "c", 96, 95), bw_line("a", "d", 24, 95),
                                 bw_line("b", "c", 95, 96), bw_line("b", "d", 24, 95), bw_line("c", "d", 24, 96)};
  auto with = [&](std::vector<std::string> docs) {
    docs.insert(docs.begin(), lines.begin(), lines.end());
    return docs;
  };
  const sweep::verdict_given none{false, false, false, false};
  auto m = sweep::merge(with({document("a", 0.2), document("b", 0.2)}), defaults, std::nullopt, none);
  EXPECT_EQ(m.count(pair_state::slow), 0u);
  EXPECT_DOUBLE_EQ(m.verdict.bw_fraction, 0.2);
  EXPECT_TRUE(has_note(m, "judged by the sweep's own --bw-fraction 0.2;")) << ::testing::PrintToString(m.notes);
  nlohmann::json doc;
  sweep::options opt;
  opt.mode = sweep::mode::report;
  sweep::to_json(doc, opt, m);
  EXPECT_DOUBLE_EQ(doc["options"]["bw_fraction"].get<double>(), 0.2) << "the options it judged by";
  // The sweep's --expect-gbps too: 0.2 of 150.
  auto expected = sweep::merge(with({document("a", 0.2, 150)}), defaults, std::nullopt, none);
  EXPECT_EQ(expected.count(pair_state::slow), 3u);
  EXPECT_TRUE(has_note(expected, "--bw-fraction 0.2, --expect-gbps 150;")) << ::testing::PrintToString(expected.notes);
  // An option given to the report is its own: the sweep's does not count.
  auto told = sweep::merge(with({document("a", 0.2)}), defaults, std::nullopt, {false, true, false, false});
  EXPECT_EQ(told.count(pair_state::slow), 3u);
  EXPECT_DOUBLE_EQ(told.verdict.bw_fraction, 0.93);
  EXPECT_FALSE(has_note(told, "judged by the sweep's own")) << ::testing::PrintToString(told.notes);
  // Ranks that ran with different options: the first document's stand, and a note says so.
  auto mixed = sweep::merge(with({document("a", 0.2), document("b", 0.93)}), defaults, std::nullopt, none);
  EXPECT_EQ(mixed.count(pair_state::slow), 0u);
  EXPECT_TRUE(has_note(mixed, "its ranks' documents disagree")) << ::testing::PrintToString(mixed.notes);
  // A document that lies (out of the option's range, not a number) is not
  // a sweep's option: the report's own stand.
  for (const auto& bad : {nlohmann::json(7), nlohmann::json("0.2"), nlohmann::json(-1), nlohmann::json(nullptr)}) {
    auto lied = sweep::merge(with({document("a", bad)}), defaults, std::nullopt, none);
    EXPECT_EQ(lied.count(pair_state::slow), 3u) << bad.dump();
    EXPECT_DOUBLE_EQ(lied.verdict.bw_fraction, 0.93) << bad.dump();
  }
  // No documents (every rank killed): the report's own options.
  EXPECT_EQ(sweep::merge(lines, defaults, std::nullopt, none).count(pair_state::slow), 3u);
}

TEST(sweep_report_bw, a_retest_beside_fewer_pairs_is_judged_by_the_rounds_bar_not_part_of_it) {
  // Five hosts in rounds of two pairs, 0.020-0.024 Gb/s each (emulated
  // guests sharing their host's cores), b-e a link below its rate. The
  // outliers' re-tests ran at the end beside fewer pairs (one at a time),
  // at two or three times their rounds' figure.
  auto bw = [](const std::string& s, const std::string& c, double g, int retest_round = 0) {
    auto j = nlohmann::json::parse(bw_line(s, c, g, g));
    if (retest_round > 0) {
      j["result"]["retest"] = true;
      j["result"]["round"] = retest_round;
    }
    return j.dump();
  };
  std::vector<std::string> lines{
      bw("a", "b", 0.024), bw("a", "c", 0.023), bw("a", "d", 0.022), bw("a", "e", 0.024), bw("b", "c", 0.021),
      bw("b", "d", 0.024), bw("b", "e", 0.005), bw("c", "d", 0.024), bw("c", "e", 0.023), bw("d", "e", 0.020),
      bw("a", "d", 0.055, 6), bw("b", "c", 0.058, 6), bw("d", "e", 0.060, 7), bw("b", "e", 0.006, 8)};
  auto m = sweep::merge(lines, defaults);
  EXPECT_LT(m.bar.group.median, 0.025) << "the rounds' figures, not the re-tests' 0.058";
  EXPECT_EQ(m.count(pair_state::slow), 1u) << sweep::format_matrix(m);
  EXPECT_EQ(pair_of(m, "b", "e").state, pair_state::slow);
  EXPECT_EQ(pair_of(m, "d", "e").state, pair_state::ok) << "its re-test passed";
  EXPECT_DOUBLE_EQ(*pair_of(m, "d", "e").figure(), 0.060) << "the best of its re-tests stands";
}

TEST(sweep_render, csv_quotes_what_it_must_and_the_rerun_list_packs_rounds) {
  std::vector<std::string> lines{line("a,1", "b\"2", false, 0), line("a,1", "=c", true, 10), line("b\"2", "=c", true, 11),
                                 line("=c", "d", false, 0)};
  auto m = sweep::merge(lines, defaults);
  auto csv = sweep::csv_text(m);
  EXPECT_EQ(csv.substr(0, csv.find("\r\n")), "a,b,state,check,sweep,round,p50_us,p99_us,a_to_b_gbps,b_to_a_gbps,retests,error");
  EXPECT_NE(csv.find("\"a,1\",\"b\"\"2\",failed,ping,1,1,,,,,0,timed out\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\"a,1\",'=c,ok"), std::string::npos) << csv;
  // A ';' splits a field in a spreadsheet of a ';' locale, and "=1+1" after
  // it was read as a formula: the field is quoted, each cell start led.
  auto semi = sweep::csv_text(sweep::merge({line("a;=1+1", "b", false, 0, {{"error", "x;@SUM(1)"}}),
                                            line("a;=1+1", "c", true, 10), line("b", "c", true, 10)},
                                           defaults));
  EXPECT_NE(semi.find("\"a;'=1+1\",b,failed,ping,1,1,,,,,0,\"x;'@SUM(1)\"\r\n"), std::string::npos) << semi;
  EXPECT_NE(semi.find("\"a;'=1+1\",c,ok"), std::string::npos) << semi;
  auto rerun = sweep::rerun_text(m);
  EXPECT_EQ(rerun.front(), '#');
  std::set<std::string> pairs;
  std::map<std::string, std::set<std::string>> busy;
  std::istringstream in(rerun);
  for (std::string l; std::getline(in, l);) {
    if (l.starts_with("#")) continue;
    std::istringstream words(l);
    std::string round, a, b;
    words >> round >> a >> b;
    EXPECT_TRUE(busy[round].insert(a).second && busy[round].insert(b).second) << rerun;
    pairs.insert(a + " " + b);
  }
  // "a,1" and "b"2" have no blanks: both bad pairs are listed.
  EXPECT_EQ(pairs.size(), 2u) << rerun;
}

TEST(sweep_render, a_utf8_name_is_itself_everywhere_and_a_control_character_escaped) {
  // café was caf\xc3\xa9 in the text, the CSV and the page, and café in
  // the JSON: valid UTF-8 stays itself; what would control a terminal is
  // the text \xNN everywhere but the JSON, which escapes it its own way.
  const std::string cafe = "caf\xc3\xa9", nihon = "\xe6\x97\xa5\xe6\x9c\xac", bad = "h\x1b[2J\xe2\x80\xae";
  auto m = sweep::merge({line(cafe, "b", true, 20), line(cafe, nihon, true, 21), line("b", nihon, true, 20),
                         line(bad, "b", false, 0), line(bad, cafe, true, 20), line(bad, nihon, true, 22)},
                        defaults);
  const std::string escaped = "h\\x1b[2J\\xe2\\x80\\xae";
  auto text = sweep::format_matrix(m);
  auto csv = sweep::csv_text(m);
  auto page = sweep::html_page(m);
  auto gauges = sweep::prometheus_text(m);
  for (const auto& [what, out] : {std::pair{"text", &text}, {"csv", &csv}, {"page", &page}, {"gauges", &gauges}}) {
    EXPECT_NE(out->find(cafe), std::string::npos) << what;
    EXPECT_NE(out->find(nihon), std::string::npos) << what;
    EXPECT_EQ(out->find('\x1b'), std::string::npos) << what;
    EXPECT_EQ(out->find("\xe2\x80\xae"), std::string::npos) << what << ": the mark that turns a line around";
  }
  EXPECT_NE(text.find("failed: b <-> " + escaped + ": timed out"), std::string::npos) << text;
  EXPECT_NE(csv.find(cafe + ",b,ok"), std::string::npos) << csv;
  EXPECT_NE(gauges.find("host=\"" + cafe + "\""), std::string::npos) << gauges;
  EXPECT_NE(gauges.find("host=\"h\\\\x1b[2J"), std::string::npos) << "a label value's backslash is escaped\n" << gauges;
  // The table's columns line up by what a terminal shows, not by bytes.
  std::istringstream rows(text);
  std::string row;
  std::getline(rows, row);
  std::set<std::size_t> widths;
  for (int i = 0; i < 5 && std::getline(rows, row); ++i) widths.insert(fabric::columns(row));
  EXPECT_EQ(widths.size(), 1u) << text;
  std::vector<std::string> names;
  sweep::each_result(m, [&](const nlohmann::json& r) { names.push_back(r["a"]); });
  EXPECT_EQ(names.front(), cafe);
}

TEST(sweep_render, groups_from_topology_and_from_names) {
  std::vector<std::string> hosts{"r1n1", "r1n2", "r2n1", "r2n2", "login"};
  auto groups = sweep::groups_of_topology(
      "# a fat tree\nSwitchName=s1 Nodes=r1n[1-2]\nSwitchName=s2 Nodes=r2n[1-2],elsewhere\nSwitchName=spine Switches=s[1-2]\n",
      hosts);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].name, "s1");
  EXPECT_EQ(groups[1].hosts, (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(groups[2].name, "(no switch)");
  EXPECT_THROW(sweep::groups_of_topology("SwitchName=s Nodes=n[1-\n", hosts), fabric::error);
  EXPECT_EQ(sweep::groups_of_names({"gpu01", "gpu02", "cpu01"}).size(), 2u);
  std::vector<std::string> many;
  for (int i = 0; i < 1000; ++i) many.push_back(fmt::format("n{}", i));
  EXPECT_EQ(sweep::groups_of_names(many).size(), 32u) << "one prefix: blocks";
}

/// Every pair of n hosts, one of them slow.
std::vector<std::string> fleet(int n) {
  std::vector<std::string> lines;
  for (int i = 0; i < n; ++i)
    for (int k = i + 1; k < n; ++k)
      lines.push_back(line(fmt::format("h{}", i), fmt::format("h{}", k), true, i == 7 || k == 7 ? 90 : 20));
  return lines;
}

TEST(sweep_render, the_page_draws_cells_when_small_and_an_overview_when_big) {
  auto small = sweep::html_page(sweep::merge(fleet(6), defaults));
  EXPECT_NE(small.find("id=\"heatmap\""), std::string::npos);
  EXPECT_EQ(small.find("<script"), std::string::npos);
  auto big = sweep::html_page(sweep::merge(fleet(130), defaults));
  EXPECT_EQ(big.find("id=\"heatmap\""), std::string::npos);
  EXPECT_NE(big.find("id=\"overview\""), std::string::npos);
  EXPECT_NE(big.find("id=\"filter\""), std::string::npos);
  EXPECT_NE(big.find("<td>h7</td>"), std::string::npos) << "the slow host's pairs are listed";
  EXPECT_EQ(big.find("http://"), big.find("http://www.w3.org/2000/svg")) << "no fetches";
}

TEST(sweep_report, a_sides_own_failure_says_why_over_its_peers_wait_for_it) {
  // The server failed on its own; the client only waited for it to listen.
  auto own = line("h1", "h2", false, 0, {{"error", "rdma_listen 10.0.0.1:18515: No such device"}}, "server");
  auto waited = line("h1", "h2", false, 0,
                     {{"error", "h1: RDMA_CM_EVENT_REJECTED (the time to meet the peer ran out)"}, {"peer_absent", true}});
  for (const auto& lines : {std::vector{own, waited}, std::vector{waited, own}}) {
    auto m = sweep::merge(lines, defaults);
    EXPECT_EQ(m.error_of(pair_of(m, "h1", "h2")), "rdma_listen 10.0.0.1:18515: No such device");
  }
  // Two failures alike: the client's, as before.
  auto client = line("h1", "h2", false, 0, {{"error", "3 of 100 datagrams lost"}});
  auto m = sweep::merge({client, own}, defaults);
  EXPECT_EQ(m.error_of(pair_of(m, "h1", "h2")), "3 of 100 datagrams lost");
}

TEST(sweep_report, hosts_whose_port_mtus_differ_are_named_in_a_note) {
  auto started = [](const std::string& host, std::optional<int> mtu) {
    return nlohmann::json{{"tool", "fabric-sweep"},
                          {"event", "started"},
                          {"started", {{"host", host}, {"hosts", {"h1", "h2", "h3", "h4"}}, {"mtu", mtu ? nlohmann::json(*mtu) : nlohmann::json()}}}}
        .dump();
  };
  std::vector<std::string> lines{started("h1", 1024), started("h2", 1024), started("h3", 4096), started("h4", std::nullopt)};
  for (const auto& [a, b] : {std::pair{"h1", "h2"}, {"h1", "h3"}, {"h2", "h3"}, {"h1", "h4"}, {"h2", "h4"}, {"h3", "h4"}})
    lines.push_back(line(a, b, true, 20));
  auto m = sweep::merge(lines, defaults);
  EXPECT_TRUE(has_note(m, "the hosts' port MTUs differ: h3 4096; the other 2 hosts 1024")) << fmt::format("{}", fmt::join(m.notes, "|"));
  // One MTU, or an MTU no port has: no note.
  auto same = sweep::merge({started("h1", 1024), started("h2", 1024), started("h3", 70000), line("h1", "h2", true, 20)}, defaults);
  EXPECT_FALSE(has_note(same, "MTUs differ"));
}

TEST(sweep_report_small, a_host_slow_with_every_peer_of_four_is_slow_and_the_worst) {
  // h4 100 ms from each peer, the others 3 to 5 ms apart: h4's pairs are
  // half of the six, which a median of every pair would sit among.
  auto m = sweep::merge({line("h1", "h2", true, 3000), line("h1", "h3", true, 3400), line("h2", "h3", true, 5300),
                         line("h1", "h4", true, 105000), line("h2", "h4", true, 110000), line("h3", "h4", true, 114000)},
                        defaults);
  EXPECT_EQ(m.count(pair_state::slow), 3u);
  EXPECT_EQ(pair_of(m, "h1", "h4").state, pair_state::slow);
  EXPECT_EQ(pair_of(m, "h2", "h3").state, pair_state::ok);
  ASSERT_EQ(m.worst.size(), 1u);
  EXPECT_EQ(m.worst[0].first, "h4");
  EXPECT_DOUBLE_EQ(m.bar.group.median, 3400);
}

/// The fills of the rects in `svg_id`'s SVG of `page`.
std::vector<std::string> fills(const std::string& page, std::string_view svg_id) {
  std::vector<std::string> out;
  auto from = page.find(fmt::format("id=\"{}\"", svg_id));
  auto to = page.find("</svg>", from);
  for (auto at = page.find("<rect", from); at < to; at = page.find("<rect", at + 1)) {
    auto f = page.find("fill=\"", at) + 6;
    out.push_back(page.substr(f, page.find('"', f) - f));
  }
  return out;
}

/// Whether a heat fill is past the passing half of the scale (orange to red).
bool warm(const std::string& fill) {
  int r = 0, g = 0, b = 0;
  return std::sscanf(fill.c_str(), "rgb(%d,%d,%d)", &r, &g, &b) == 3 && g < 180;
}

TEST(sweep_render, the_overview_colours_a_healthy_block_by_its_median_not_its_worst) {
  // 130 hosts around 20 us, one passing pair in each block near the bar
  // (45 us: under 2.5 x 20), and one slow pair.
  std::vector<std::string> lines;
  for (int i = 0; i < 130; ++i)
    for (int k = i + 1; k < 130; ++k) {
      double p50 = 20 + (i + k) % 3;
      if ((i + k) % 17 == 0) p50 = 45;
      if (i == 3 && k == 100) p50 = 200;
      lines.push_back(line(fmt::format("h{:03}", i), fmt::format("h{:03}", k), true, p50));
    }
  auto m = sweep::merge(lines, defaults);
  ASSERT_EQ(m.count(pair_state::slow), 1u);
  auto page = sweep::html_page(m);
  auto blocks = fills(page, "overview");
  ASSERT_FALSE(blocks.empty());
  // The slow pair's block and its mirror; every other block passes.
  EXPECT_EQ(std::count_if(blocks.begin(), blocks.end(), warm), 2) << "only the slow pair's block is red";
  EXPECT_LT(page.find("id=\"worst\""), page.find("id=\"overview\"")) << "the worst hosts come first";

  // On the heat map of a few, a passing pair near the bar is yellow at
  // most, a slow one red.
  auto few = sweep::html_page(sweep::merge({line("a", "b", true, 20), line("a", "c", true, 21), line("b", "c", true, 49),
                                            line("a", "d", true, 20), line("b", "d", true, 21), line("c", "d", true, 22),
                                            line("a", "e", true, 20), line("b", "e", true, 21), line("c", "e", true, 20),
                                            line("d", "e", true, 200)},
                                           defaults));
  auto cells = fills(few, "heatmap");
  EXPECT_EQ(std::count(cells.begin(), cells.end(), "rgb(255,30,60)"), 2) << "d <-> e, both cells";
  EXPECT_EQ(std::count_if(cells.begin(), cells.end(), warm), 2) << "b <-> c passes: not red";
}

TEST(sweep_render, a_bw_cell_is_red_only_for_the_direction_below_the_bar) {
  std::vector<std::string> lines;
  for (int i = 0; i < 6; ++i)
    for (int k = i + 1; k < 6; ++k)
      if (i != 0 || k != 5) lines.push_back(bw_line(fmt::format("h{}", i), fmt::format("h{}", k), 95 + i, 95 + k));
  lines.push_back(bw_line("h0", "h5", 20, 95));  // h0 -> h5 slow, h5 -> h0 fine
  auto m = sweep::merge(lines, defaults);
  ASSERT_EQ(m.count(pair_state::slow), 1u);
  auto page = sweep::html_page(m);
  auto cells = fills(page, "heatmap");
  EXPECT_EQ(std::count_if(cells.begin(), cells.end(), warm), 1);
  std::size_t marks = 0;
  for (auto at = page.find("!</text>"); at != std::string::npos; at = page.find("!</text>", at + 1)) ++marks;
  EXPECT_EQ(marks, 1u) << "the human table's rule: ! below the bar";
}

TEST(sweep_render, gauges_per_host_by_default_every_pair_on_request) {
  auto m = sweep::merge(fleet(10), defaults);
  auto series = [](const std::string& text, std::string_view name) {
    std::size_t n = 0;
    for (std::size_t at = 0; (at = text.find(fmt::format("\n{}{{", name), at)) != std::string::npos; ++at) ++n;
    return n;
  };
  auto lean = sweep::prometheus_text(m);
  EXPECT_EQ(series(lean, "fabric_sweep_pair_p50_seconds"), 0u);
  EXPECT_EQ(series(lean, "fabric_sweep_host_max_p50_seconds"), 10u);
  EXPECT_EQ(series(lean, "fabric_sweep_pair_bad"), 9u) << "h7's pairs";
  auto full = sweep::prometheus_text(m, true);
  EXPECT_EQ(series(full, "fabric_sweep_pair_p50_seconds") + series(full, "fabric_sweep_pair_p99_seconds"), 10u * 9 / 2 * 2);
  EXPECT_EQ(series(lean, "fabric_sweep_median_p50_seconds"), 1u);
}

TEST(sweep_render, no_pair_measured_no_median_gauge) {
  // Empty input wrote a median of 0 s: a dashboard read perfect latency.
  for (const auto& m : {sweep::merge({}, defaults), sweep::merge({line("a", "b", false, 0), line("a", "c", false, 0)}, defaults)}) {
    auto text = sweep::prometheus_text(m);
    EXPECT_EQ(text.find("fabric_sweep_median_p50_seconds"), std::string::npos) << text;
    EXPECT_NE(text.find("fabric_sweep_hosts "), std::string::npos) << text;
    auto page = sweep::html_page(m);
    EXPECT_EQ(page.find("Median p50"), std::string::npos) << "nor a median on the page";
    EXPECT_NE(page.find("No pair measured."), std::string::npos);
  }
}

}  // namespace
