#include "fabric/base/stats.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

using fabric::summarize;

TEST(stats, empty_has_zero_count) {
  auto s = summarize({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.max, 0.0);
}

TEST(stats, percentiles_use_nearest_rank_like_perftest) {
  std::vector<double> v;
  for (int i = 1000; i >= 1; --i) v.push_back(i);  // unsorted input
  auto s = summarize(v);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 1000);
  EXPECT_EQ(s.p50, 501);   // sorted[500]
  EXPECT_EQ(s.p99, 991);   // sorted[990]
  EXPECT_EQ(s.p999, 1000); // sorted[999]
  EXPECT_DOUBLE_EQ(s.mean, 500.5);
}

TEST(stats, stdev_is_population) {
  std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  auto s = summarize(v);
  EXPECT_DOUBLE_EQ(s.stdev, 2.0);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
}

TEST(stats, single_sample) {
  std::vector<double> v{3.5};
  auto s = summarize(v);
  EXPECT_EQ(s.p50, 3.5);
  EXPECT_EQ(s.p999, 3.5);
  EXPECT_EQ(s.stdev, 0.0);
}

TEST(stats, json_keys) {
  std::vector<double> v{1, 2, 3};
  nlohmann::json j = summarize(v);
  EXPECT_EQ(j["count"], 3);
  for (const char* k : {"min_us", "p50_us", "p99_us", "p999_us", "max_us", "mean_us", "stdev_us"})
    EXPECT_TRUE(j[k].is_number()) << k;
}

TEST(stats, json_without_samples_is_null_but_the_count) {
  nlohmann::json j = fabric::latency_stats{}.summary();
  EXPECT_EQ(j["count"], 0);
  EXPECT_TRUE(j["p50_us"].is_null());
  EXPECT_EQ(j.size(), 8u);
}

// Percentiles as exact nearest-rank values: sorted[floor(q * n)].
double exact_rank(std::vector<double>& sorted, double q) {
  auto i = std::min(static_cast<std::size_t>(q * static_cast<double>(sorted.size())), sorted.size() - 1);
  return sorted[i];
}

TEST(stats, tens_of_millions_of_samples_in_fixed_memory_within_the_stated_error) {
  // A long-tailed latency distribution from 1 us to about 20 ms, as an
  // endless rping sees; a fixed seed keeps the test repeatable.
  constexpr std::size_t n = 20'000'000;
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> body(std::log(25.0), 0.35);
  std::exponential_distribution<double> tail(1.0 / 2000.0);
  std::vector<double> samples(n);
  fabric::latency_stats stats;
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double v = (i % 500 == 0) ? 1.0 + tail(rng) : body(rng);
    samples[i] = v;
    sum += v;
    stats.add(v);
  }
  auto s = stats.summary();
  std::sort(samples.begin(), samples.end());
  EXPECT_EQ(s.count, n);
  EXPECT_EQ(s.min, samples.front());
  EXPECT_EQ(s.max, samples.back());
  EXPECT_NEAR(s.mean, sum / n, 1e-9 * s.mean);
  for (auto [q, got] : {std::pair{0.5, s.p50}, {0.99, s.p99}, {0.999, s.p999}}) {
    double want = exact_rank(samples, q);
    EXPECT_LE(std::abs(got - want), fabric::latency_stats::relative_error * want) << "q " << q;
  }
  double var = 0;
  for (double v : samples) var += (v - s.mean) * (v - s.mean);
  EXPECT_NEAR(s.stdev, std::sqrt(var / n), 1e-6 * s.stdev);
}

TEST(stats, exact_up_to_the_exact_sample_count) {
  fabric::latency_stats s;
  for (std::size_t i = fabric::latency_stats::exact_samples; i >= 1; --i) s.add(static_cast<double>(i));
  EXPECT_EQ(s.percentile(0.5), static_cast<double>(fabric::latency_stats::exact_samples / 2 + 1));
}

TEST(stats, merge_equals_adding_everything_to_one) {
  fabric::latency_stats a, b, all;
  for (int i = 0; i < 6000; ++i) {
    double v = 1.0 + (i * 37 % 1000);
    (i % 3 ? a : b).add(v);
    all.add(v);
  }
  a.merge(b);
  auto x = a.summary(), y = all.summary();
  EXPECT_EQ(x.count, y.count);
  EXPECT_EQ(x.p99, y.p99);
  EXPECT_NEAR(x.mean, y.mean, 1e-9);
  EXPECT_NEAR(x.stdev, y.stdev, 1e-9);
}
