// The verdict's rules (verdict.hpp; fabric-sweep(1), "The verdict rules"),
// each held to a case: what the fabric should do (--expect-gbps, --expect-us,
// --expect-gbps auto), the bar a re-run carries from its first run, and the
// fleet's own bar when faults come in groups: a leaf's uplink, a batch of
// slow adapters, half the fleet behind a slow link, and clean fleets whose
// noise must never be a finding.
#include "fabric-sweep/report/report.hpp"
#include "fabric-sweep/verdict.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>

namespace {

using sweep::check;
using sweep::pair_state;
using pair_set = std::set<std::pair<int, int>>;
const sweep::verdict_options defaults{};

/// Noise a fleet's figures carry: each figure times 1 + a normal draw of
/// `sigma`, or a uniform one within +-sigma. Seeded: every run the same.
class noise {
public:
  noise(double sigma, bool normal, std::uint64_t seed) : sigma_(sigma), normal_(normal), gen_(seed) {}
  double operator()() {
    if (normal_) return 1 + std::normal_distribution<double>(0, sigma_)(gen_);
    return 1 + std::uniform_real_distribution<double>(-sigma_, sigma_)(gen_);
  }

private:
  double sigma_;
  bool normal_;
  std::mt19937_64 gen_;
};

std::string host(int i) { return fmt::format("h{:02}", i); }

/// A client's pair line: a p50 for latency checks, both directions for bw.
std::string pair_line(check c, int a, int b, double figure) {
  nlohmann::json pair{{"kind", "pair"}, {"ok", true},      {"error", nullptr},     {"round", 1},
                      {"sweep", 1},     {"retest", false}, {"server", host(a)},    {"client", host(b)},
                      {"side", "client"}, {"check", sweep::check_name(c)}};
  if (sweep::measures_bandwidth(c)) {
    nlohmann::json d{{"bytes", static_cast<std::uint64_t>(figure * 1e9 / 8)}, {"elapsed_us", 1e6}, {"gbps", figure}};
    pair["bandwidth"] = {{"server_to_client", d}, {"client_to_server", d}};
  } else {
    pair["latency"] = {{"count", 100}, {"p50_us", figure}, {"p99_us", figure * 1.2}};
  }
  return nlohmann::json{{"tool", "fabric-sweep"}, {"event", "result"}, {"result", pair}}.dump();
}

/// Every pair of n hosts, pair (a, b)'s figure `figure(a, b)` times noise.
std::vector<std::string> fleet(check c, int n, const std::function<double(int, int)>& figure, noise z) {
  std::vector<std::string> out;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) out.push_back(pair_line(c, a, b, figure(a, b) * z()));
  return out;
}

/// The pairs the report did not pass, by host index.
pair_set flagged(const sweep::matrix& m) {
  pair_set out;
  for (const auto& p : m.pairs)
    if (sweep::is_bad(p.state)) out.emplace(static_cast<int>(p.a), static_cast<int>(p.b));
  return out;
}

std::size_t slow_count(const sweep::matrix& m) { return m.count(pair_state::slow); }

/// The pairs of n hosts that `bad(a, b)` picks.
pair_set pairs_where(int n, const std::function<bool(int, int)>& bad) {
  pair_set out;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (bad(a, b)) out.emplace(a, b);
  return out;
}

bool has_note(const sweep::matrix& m, std::string_view text) {
  return std::any_of(m.notes.begin(), m.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

/// The indices of `figures` slow by the bar they make (no expectation).
std::vector<std::size_t> slow_of(check c, const std::vector<double>& figures, const sweep::verdict_options& o,
                                 sweep::fleet_bar& bar) {
  bar = sweep::bar_of(c, figures, o);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < figures.size(); ++i)
    if (sweep::is_slow(c, figures[i], bar)) out.push_back(i);
  return out;
}

// ---- the cases: every pair of ten hosts, 1% noise ----------------

TEST(sweep_verdict_groups, three_hosts_behind_an_uplink_at_80_percent) {
  auto behind = [](int h) { return h < 3; };
  auto m = sweep::merge(fleet(check::bw, 10, [&](int a, int b) { return behind(a) != behind(b) ? 80.0 : 100.0; },
                              noise(0.01, true, 1)),
                        defaults);
  auto cross = pairs_where(10, [&](int a, int b) { return behind(a) != behind(b); });
  EXPECT_EQ(cross.size(), 21u);
  EXPECT_EQ(flagged(m), cross) << sweep::format_matrix(m);
  EXPECT_FALSE(sweep::judge(m).ok());
  EXPECT_TRUE(has_note(m, "h00, h01, h02 pass with each other and the other 7 hosts with each other, but every pair "
                          "between the two groups is slow or failed"))
      << fmt::format("{}", m.notes);
}

TEST(sweep_verdict_groups, three_hosts_at_80_percent_with_every_peer) {
  auto slow = [](int h) { return h < 3; };
  auto m = sweep::merge(fleet(check::bw, 10, [&](int a, int b) { return slow(a) || slow(b) ? 80.0 : 100.0; },
                              noise(0.01, true, 2)),
                        defaults);
  auto touching = pairs_where(10, [&](int a, int b) { return slow(a) || slow(b); });
  EXPECT_EQ(touching.size(), 24u);
  EXPECT_EQ(flagged(m), touching) << sweep::format_matrix(m);
  EXPECT_TRUE(has_note(m, "the fleet splits in two: 24 of 45 pairs run at 79% of the other 21"))
      << fmt::format("{}", m.notes);
  ASSERT_EQ(m.worst.size(), 3u) << "the three slow hosts, not the healthy seven";
  for (const auto& [name, bad] : m.worst) EXPECT_TRUE(name == "h00" || name == "h01" || name == "h02") << name;
}

TEST(sweep_verdict_groups, half_the_fleet_behind_a_link_at_70_percent) {
  auto half = [](int h) { return h < 5; };
  auto m = sweep::merge(fleet(check::bw, 10, [&](int a, int b) { return half(a) != half(b) ? 70.0 : 100.0; },
                              noise(0.01, true, 3)),
                        defaults);
  auto cross = pairs_where(10, [&](int a, int b) { return half(a) != half(b); });
  EXPECT_EQ(cross.size(), 25u);
  EXPECT_EQ(flagged(m), cross) << sweep::format_matrix(m);
  EXPECT_FALSE(sweep::judge(m).ok());
  EXPECT_TRUE(has_note(m, "the fleet splits in two: 25 of 45 pairs run at 70% of the other 20"))
      << fmt::format("{}", m.notes);
}

TEST(sweep_verdict_groups, half_the_fleet_behind_a_link_at_three_times_the_latency) {
  auto half = [](int h) { return h < 5; };
  auto m = sweep::merge(fleet(check::ping, 10, [&](int a, int b) { return half(a) != half(b) ? 60.0 : 20.0; },
                              noise(0.01, true, 4)),
                        defaults);
  EXPECT_EQ(flagged(m), pairs_where(10, [&](int a, int b) { return half(a) != half(b); })) << sweep::format_matrix(m);
  EXPECT_NEAR(m.bar.group.median, 20, 0.5) << "the healthy pairs' median, not the fleet's";
}

TEST(sweep_verdict_groups, a_healthy_group_without_noise_passes_itself) {
  // Synthetic or quantized figures: the healthy pairs all at 20 us, a
  // slower group about 200. The bar once fell on the healthy group's own
  // edge, and every pair of the fleet was slow.
  for (auto c : {check::ping, check::bw}) {
    bool bw = sweep::measures_bandwidth(c);
    auto m = sweep::merge(fleet(c, 12, [&](int a, int b) { return (a + b) % 5 == 0 ? (bw ? 10.0 : 200.0) + a % 3 : (bw ? 100.0 : 20.0); },
                                noise(0, true, 5)),
                          defaults);
    EXPECT_EQ(flagged(m), pairs_where(12, [](int a, int b) { return (a + b) % 5 == 0; })) << sweep::format_matrix(m);
  }
}

TEST(sweep_verdict_expected, an_expected_rate_sets_the_bar_whatever_the_fleet) {
  // Four hosts: one pair at 110 Gb/s, five at 100; the fabric should reach 95.
  std::vector<std::string> lines;
  int at = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) lines.push_back(pair_line(check::bw, a, b, at++ == 0 ? 110 : 100));
  sweep::verdict_options o;
  o.expect_gbps = 95;
  auto m = sweep::merge(lines, o);
  EXPECT_TRUE(flagged(m).empty()) << sweep::format_matrix(m);
  EXPECT_TRUE(sweep::judge(m).ok());
  EXPECT_EQ(m.bar.source, sweep::bar_source::expected);
  EXPECT_DOUBLE_EQ(*m.bar.value, 0.93 * 95);
  // The same expectation flags a fleet that is all below it, which the
  // fleet's own bar cannot.
  std::vector<std::string> all_slow;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) all_slow.push_back(pair_line(check::bw, a, b, 60));
  EXPECT_EQ(flagged(sweep::merge(all_slow, o)).size(), 6u);
  EXPECT_TRUE(flagged(sweep::merge(all_slow, defaults)).empty());
}

TEST(sweep_verdict_expected, an_expected_latency_sets_the_bar_of_latency_checks) {
  sweep::verdict_options o;
  o.expect_us = 10;
  auto m = sweep::merge(fleet(check::ping, 5, [](int, int) { return 30.0; }, noise(0.01, true, 5)), o);
  EXPECT_EQ(flagged(m).size(), 10u) << "every pair above 2.5 x 10 us";
  EXPECT_DOUBLE_EQ(*m.bar.value, 25);
  o.expect_us = 20;
  EXPECT_TRUE(flagged(sweep::merge(fleet(check::ping, 5, [](int, int) { return 30.0; }, noise(0.01, true, 5)), o)).empty());
  // --expect-us says nothing of bandwidth, nor --expect-gbps of latency.
  EXPECT_EQ(sweep::bar_of(check::bw, {100, 100, 100}, o).source, sweep::bar_source::fleet);
  sweep::verdict_options gbps;
  gbps.expect_gbps = 1000;
  EXPECT_EQ(sweep::bar_of(check::ping, {20, 20, 20}, gbps).source, sweep::bar_source::fleet);
}

// ---- correlated faults of other shapes, and clean fleets -----------------

struct fault_case {
  std::string name;
  check c;
  int hosts;
  std::function<double(int, int)> figure;
  std::function<bool(int, int)> bad;
};

std::vector<fault_case> fault_cases() {
  auto pct = [](double healthy, double bad) { return [=](bool is_bad) { return is_bad ? bad : healthy; }; };
  std::vector<fault_case> out;
  for (int n : {8, 12, 24}) {
    int third = n / 3, half = n / 2;
    auto leaf = [third](int a, int b) { return (a < third) != (b < third); };
    auto adapters = [third](int a, int b) { return a < third || b < third; };
    auto halves = [half](int a, int b) { return (a < half) != (b < half); };
    auto bw = pct(100, 75), ping = pct(20, 65);
    out.push_back({fmt::format("a leaf's uplink at 75%, {} hosts", n), check::bw, n, [=](int a, int b) { return bw(leaf(a, b)); }, leaf});
    out.push_back({fmt::format("slow adapters at 75%, {} hosts", n), check::bw, n,
                   [=](int a, int b) { return 100 * std::pow(0.75, (a < third) + (b < third)); }, adapters});
    out.push_back({fmt::format("half behind a link at 75%, {} hosts", n), check::bw, n, [=](int a, int b) { return bw(halves(a, b)); }, halves});
    out.push_back({fmt::format("half with slow adapters, {} hosts", n), check::bw, n,
                   [=](int a, int b) { return a < half || b < half ? 78.0 : 100.0; },
                   [=](int a, int b) { return a < half || b < half; }});
    out.push_back({fmt::format("a leaf's uplink at 3.2x, {} hosts", n), check::ping, n, [=](int a, int b) { return ping(leaf(a, b)); }, leaf});
    out.push_back({fmt::format("slow adapters at 3.2x, {} hosts", n), check::connect, n,
                   [=](int a, int b) { return ping(adapters(a, b)); }, adapters});
    out.push_back({fmt::format("half behind a link at 3.2x, {} hosts", n), check::ping, n, [=](int a, int b) { return ping(halves(a, b)); }, halves});
  }
  return out;
}

TEST(sweep_verdict_groups, each_correlated_fault_flags_exactly_the_pairs_that_cross_it) {
  for (const auto& f : fault_cases())
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      auto m = sweep::merge(fleet(f.c, f.hosts, f.figure, noise(0.01, true, seed)), defaults);
      EXPECT_EQ(flagged(m), pairs_where(f.hosts, f.bad)) << f.name << ", seed " << seed << "\n" << sweep::format_matrix(m);
    }
}

TEST(sweep_verdict_groups, a_clean_fleet_with_three_percent_noise_flags_nothing) {
  for (int n : {4, 6, 10, 16, 32, 64})
    for (bool normal : {true, false})
      for (std::uint64_t seed = 1; seed <= 6; ++seed)
        for (check c : {check::bw, check::ping}) {
          auto m = sweep::merge(fleet(c, n, [&](int, int) { return c == check::bw ? 100.0 : 20.0; },
                                      noise(0.03, normal, seed * 100 + static_cast<std::uint64_t>(n))),
                                defaults);
          EXPECT_TRUE(flagged(m).empty()) << n << " hosts, " << (normal ? "normal" : "uniform") << " noise, seed "
                                          << seed << ", " << sweep::check_name(c) << "\n"
                                          << sweep::format_matrix(m);
          EXPECT_FALSE(has_note(m, "splits in two")) << fmt::format("{}", m.notes);
        }
}

TEST(sweep_verdict_groups, a_lone_slow_link_among_noise_is_slow_and_nothing_else) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    auto m = sweep::merge(fleet(check::bw, 16, [](int a, int b) { return a == 3 && b == 9 ? 80.0 : 100.0; },
                                noise(0.01, true, seed)),
                          defaults);
    EXPECT_EQ(flagged(m), (pair_set{{3, 9}})) << seed;
  }
}

// ---- the fleet's rules ----------------------------------------------------

TEST(sweep_verdict_rules, fewer_than_three_pairs_make_no_bar) {
  sweep::fleet_bar bar;
  EXPECT_TRUE(slow_of(check::bw, {100, 10}, defaults, bar).empty());
  EXPECT_EQ(bar.source, sweep::bar_source::none);
  EXPECT_TRUE(slow_of(check::ping, {10, 100}, defaults, bar).empty());
}

TEST(sweep_verdict_rules, one_lucky_pair_never_sets_the_bar) {
  sweep::fleet_bar bar;
  // Four hosts: one pair at 110, five at 100 (the 90th percentile of six
  // pairs would be the lucky one, and 0.93 x 110 = 102 fails the five).
  EXPECT_TRUE(slow_of(check::bw, {110, 100, 100, 100, 100, 100}, defaults, bar).empty());
  EXPECT_DOUBLE_EQ(bar.group.median, 100);
  EXPECT_TRUE(slow_of(check::ping, {8, 20, 21, 19, 22, 20}, defaults, bar).empty());
}

TEST(sweep_verdict_rules, a_fleet_that_varies_lowers_the_bw_bar_to_its_noise_a_third_at_most) {
  sweep::fleet_bar bar;
  // Eight virtual machines on two cores, the rounds of a bw sweep: healthy
  // pairs from 0.021 to 0.035 Gb/s (the last round's fastest: its pairs
  // ended one by one, leaving the others more of the cores), one at 0.0105.
  std::vector<double> guests{0.0105, 0.0212, 0.0213, 0.0216, 0.0218, 0.0219, 0.0220, 0.0222, 0.0223, 0.0224,
                             0.0225, 0.0226, 0.0227, 0.0227, 0.0227, 0.0230, 0.0232, 0.0234, 0.0235, 0.0236,
                             0.0243, 0.0247, 0.0247, 0.0250, 0.0286, 0.0310, 0.0325, 0.0347};
  EXPECT_EQ(slow_of(check::bw, guests, defaults, bar), (std::vector<std::size_t>{0}));
  ASSERT_TRUE(bar.split) << "the pair at half the others' rate is a group of its own";
  EXPECT_EQ(bar.split->slower, 1u);
  EXPECT_GT(*bar.value, 0.0105);
  EXPECT_LE(*bar.value, 0.0212);
  // Without it, nothing splits the guests: their own noise lowers the bar,
  // but not below two thirds of the fraction's.
  std::vector<double> healthy(guests.begin() + 1, guests.end());
  EXPECT_TRUE(slow_of(check::bw, healthy, defaults, bar).empty());
  EXPECT_FALSE(bar.split);
  EXPECT_NEAR(*bar.value, 2.0 / 3 * 0.93 * bar.group.median, 1e-12) << "lowered a third at most";
  // A fabric within a few tenths of a percent: a link at 0.92 of the
  // fleet is slow.
  std::vector<double> fabric{96.0, 95.5, 96.2, 95.8, 96.1, 95.9, 96.3, 95.7, 96.0, 95.6, 88.3};
  EXPECT_EQ(slow_of(check::bw, fabric, defaults, bar), (std::vector<std::size_t>{10}));
  EXPECT_NEAR(bar.group.median, 95.95, 1e-9);
}

TEST(sweep_verdict_rules, a_split_needs_both_distance_and_the_rules_ratio) {
  sweep::fleet_bar bar;
  // Two groups far apart for their noise, but the slower at 0.95 of the
  // faster: within --bw-fraction 0.93, no finding.
  std::vector<double> close{100, 100.1, 99.9, 100, 100.2, 95, 95.1, 94.9, 95, 95.2};
  EXPECT_TRUE(slow_of(check::bw, close, defaults, bar).empty());
  EXPECT_FALSE(bar.split);
  // At 0.90 they are two groups, and the slower is slow.
  std::vector<double> apart{100, 100.1, 99.9, 100, 100.2, 90, 90.1, 89.9, 90, 90.2};
  EXPECT_EQ(slow_of(check::bw, apart, defaults, bar).size(), 5u);
  ASSERT_TRUE(bar.split);
  EXPECT_EQ(bar.split->slower, 5u);
  // Latency: a group at twice the time is within --outlier-factor 2.5.
  std::vector<double> twice{20, 20.1, 19.9, 20, 40, 40.2, 39.8, 40};
  EXPECT_TRUE(slow_of(check::ping, twice, defaults, bar).empty());
}

TEST(sweep_verdict_rules, clusterkits_rules_beside_ours) {
  // ClusterKit's, as its documentation states them: latency bad above 2.1
  // times the fleet's minimum; bandwidth bad below 93% of its maximum.
  auto clusterkit = [](bool bandwidth, const std::vector<double>& figures) {
    std::vector<std::size_t> out;
    auto lo = *std::min_element(figures.begin(), figures.end()), hi = *std::max_element(figures.begin(), figures.end());
    for (std::size_t i = 0; i < figures.size(); ++i)
      if (bandwidth ? figures[i] < 0.93 * hi : figures[i] > 2.1 * lo) out.push_back(i);
    return out;
  };
  sweep::fleet_bar bar;
  // Connection setup, in us: 17 ms a pair, one at 47 ms (2.7x the median).
  std::vector<double> setup{17000, 16800, 17300, 17100, 16900, 17200, 47000};
  EXPECT_EQ(slow_of(check::connect, setup, defaults, bar), (std::vector<std::size_t>{6}));
  sweep::verdict_options old;
  old.outlier_factor = 3.0;
  EXPECT_TRUE(slow_of(check::connect, setup, old, bar).empty()) << "3x passed it";
  EXPECT_EQ(clusterkit(false, setup), (std::vector<std::size_t>{6}));
  // One unusually fast pair: ClusterKit's minimum moves and every ordinary
  // pair turns bad; the healthy pairs' median does not move.
  std::vector<double> lucky{20, 21, 19, 22, 20, 8};
  EXPECT_TRUE(slow_of(check::ping, lucky, defaults, bar).empty());
  EXPECT_EQ(clusterkit(false, lucky).size(), 5u);
  // Bandwidth: one lucky pair sets ClusterKit's bar, not ours.
  std::vector<double> gbps{90, 91, 90, 89, 91, 90, 90, 89, 91, 99};
  EXPECT_TRUE(slow_of(check::bw, gbps, defaults, bar).empty());
  EXPECT_EQ(clusterkit(true, gbps).size(), 9u);
  // A slow link: both flag it.
  std::vector<double> slow_link{90, 91, 90, 60, 91, 90};
  EXPECT_EQ(slow_of(check::bw, slow_link, defaults, bar), (std::vector<std::size_t>{3}));
  EXPECT_EQ(clusterkit(true, slow_link), (std::vector<std::size_t>{3}));
}

// ---- the ports' rates: --expect-gbps auto ---------------------------------

TEST(sweep_verdict_ports, a_links_data_rate_by_its_generation_and_mtu) {
  auto rate = [](double gbps, std::string speed, std::string layer, std::uint32_t mtu) {
    return *sweep::data_rate_gbps({gbps, std::move(speed), std::move(layer), mtu});
  };
  EXPECT_NEAR(rate(40, "QDR", "InfiniBand", 4096), 40 * 0.8 * 4096 / 4122, 1e-9) << "8b/10b";
  EXPECT_NEAR(rate(56, "FDR", "InfiniBand", 4096), 56 * 64.0 / 66 * 4096 / 4122, 1e-9) << "64b/66b";
  EXPECT_NEAR(rate(100, "EDR", "InfiniBand", 4096), 100 * 4096.0 / 4122, 1e-9) << "a data rate already";
  EXPECT_NEAR(rate(400, "ndr", "InfiniBand", 2048), 400 * 2048.0 / 2074, 1e-9) << "any case";
  EXPECT_NEAR(rate(25, "EDR", "Ethernet", 1024), 25 * 1024.0 / 1106, 1e-9) << "RoCE v2's headers";
  EXPECT_FALSE(sweep::data_rate_gbps({0, "EDR", "InfiniBand", 4096}));
}

/// A started event of `h`'s rank: its hosts and its port.
std::string started(int h, int n, double rate, const std::string& speed) {
  std::vector<std::string> hosts;
  for (int i = 0; i < n; ++i) hosts.push_back(host(i));
  nlohmann::json adapter{{"device", "mlx5_0"}, {"port", 1},        {"link_layer", "InfiniBand"}, {"mtu", 4096},
                         {"width", "4X"},      {"speed", speed},   {"rate_gbps", rate}};
  return nlohmann::json{{"tool", "fabric-sweep"},
                        {"event", "started"},
                        {"started", {{"rank", h}, {"host", host(h)}, {"hosts", hosts}, {"adapter", adapter}}}}
      .dump();
}

TEST(sweep_verdict_ports, each_pair_is_judged_by_the_lower_of_its_two_ports) {
  // h03 came up at QDR (40 Gb/s, 31.8 of data) among EDR hosts: its pairs
  // at 31 Gb/s are what its port can do; h01-h02 at 60 is a slow link.
  std::vector<std::string> lines;
  for (int h = 0; h < 4; ++h) lines.push_back(started(h, 4, h == 3 ? 40 : 100, h == 3 ? "QDR" : "EDR"));
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) lines.push_back(pair_line(check::bw, a, b, b == 3 ? 31 : a == 1 && b == 2 ? 60 : 97));
  sweep::verdict_options o;
  o.expect_gbps_auto = true;
  auto m = sweep::merge(lines, o);
  EXPECT_EQ(flagged(m), (pair_set{{1, 2}})) << sweep::format_matrix(m);
  EXPECT_EQ(m.bar.source, sweep::bar_source::ports);
  EXPECT_NEAR(*sweep::bar_for(m, m.pair_of(0, 3)), 0.93 * 40 * 0.8 * 4096 / 4122, 1e-9);
  EXPECT_TRUE(has_note(m, "judged by each pair's ports")) << fmt::format("{}", m.notes);
  // The fleet's own bar flags the QDR host's pairs instead.
  auto by_fleet = sweep::merge(lines, defaults);
  EXPECT_EQ(flagged(by_fleet), (pair_set{{0, 3}, {1, 2}, {1, 3}, {2, 3}}));
}

// ---- a re-run judged by its first run ------------------------------------

TEST(sweep_verdict_rerun, a_bar_line_reads_back_for_its_check_only) {
  auto line = sweep::bar_line(check::ping, 53.5);
  EXPECT_EQ(line, "#bar ping 53.5 us");
  EXPECT_EQ(sweep::bar_of_line(line, check::ping), 53.5);
  EXPECT_EQ(sweep::bar_of_line(line + "\r", check::ping), 53.5);
  EXPECT_FALSE(sweep::bar_of_line(line, check::connect));
  EXPECT_EQ(sweep::bar_of_line(sweep::bar_line(check::bw, 93.1), check::bw), 93.1);
  for (const char* bad : {"#bar ping 53.5", "#bar ping x us", "#bar ping 53.5 gbps", "#bar ping -1 us", "#bar ping 1e99 us",
                          "#bar ping 53.5 us extra", "# bar ping 53.5 us", "#bar ping nan us"})
    EXPECT_FALSE(sweep::bar_of_line(bad, check::ping)) << bad;
}

TEST(sweep_verdict_rerun, the_outliers_file_carries_the_bar_and_the_rerun_is_judged_by_it) {
  // The first run: ten hosts, four of whose pairs with h09 at 3x.
  auto slow = [](int a, int b) { return b == 9 && a < 4; };
  auto first = sweep::merge(fleet(check::ping, 10, [&](int a, int b) { return slow(a, b) ? 60.0 : 20.0; },
                                  noise(0.01, true, 9)),
                            defaults);
  ASSERT_EQ(flagged(first).size(), 4u);
  auto file = sweep::rerun_text(first);
  auto at = file.find("#bar ping ");
  ASSERT_NE(at, std::string::npos) << file;
  auto carried = sweep::bar_of_line(file.substr(at, file.find('\n', at) - at), check::ping);
  ASSERT_TRUE(carried);
  EXPECT_NEAR(*carried, *first.bar.value, 0.01);
  // The re-run meets those four pairs alone, still at 3x: judged against
  // themselves they pass; its ranks carry the first run's bar, and the
  // report judges by it.
  std::vector<std::string> again;
  for (int a = 0; a < 4; ++a) again.push_back(pair_line(check::ping, a, 9, 60 + a));
  EXPECT_EQ(slow_count(sweep::merge(again, defaults)), 0u);
  nlohmann::json start{{"tool", "fabric-sweep"},
                       {"event", "started"},
                       {"started", {{"rank", 0}, {"host", "h00"}, {"first_run", {{"bar_us", *carried}, {"bar_gbps", nullptr}}}}}};
  again.push_back(start.dump());
  auto m = sweep::merge(again, defaults);
  EXPECT_EQ(slow_count(m), 4u) << sweep::format_matrix(m);
  EXPECT_EQ(m.bar.source, sweep::bar_source::first_run);
  EXPECT_TRUE(has_note(m, "judged by the first run's bar")) << fmt::format("{}", m.notes);
  // An expectation given to the report judges over it.
  sweep::verdict_options o;
  o.expect_us = 30;
  EXPECT_EQ(slow_count(sweep::merge(again, o)), 0u);
}

}  // namespace
