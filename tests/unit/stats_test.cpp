#include "fabric/stats.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
  for (const char* k : {"min", "p50", "p99", "p999", "max", "mean", "stdev"}) EXPECT_TRUE(j.contains(k)) << k;
}
