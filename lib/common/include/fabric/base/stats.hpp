#pragma once
/// Latency statistics with perftest's conventions, kept in fixed memory
/// whatever the number of samples, so that endless runs (rping -C 0, -P)
/// keep constant memory.

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace fabric {

/// Summary of a set of samples, all in microseconds.
struct latency_summary {
  std::size_t count = 0;
  double min = 0, p50 = 0, p99 = 0, p999 = 0, max = 0, mean = 0, stdev = 0;
};

/// Running statistics of latency samples (microseconds) in fixed memory.
///
/// count, min, max, mean and the population standard deviation are exact.
/// Percentiles are nearest-rank at index floor(q * count) of the sorted
/// samples, as perftest reports t_typical (p50), t_99 and t_99.9: exact
/// while at most `exact_samples` samples were added, and from a log-linear
/// histogram after that, within `relative_error` of the exact value.
class latency_stats {
public:
  /// Samples kept exactly before the histogram takes over.
  static constexpr std::size_t exact_samples = 4096;
  /// Histogram buckets per power of two; a bucket's midpoint is within
  /// 1 / (2 * sub_buckets) of any value in it.
  static constexpr std::size_t sub_buckets = 128;
  /// The bound on a percentile's relative error once the histogram is used.
  static constexpr double relative_error = 1.0 / (2.0 * sub_buckets);

  latency_stats();
  latency_stats(const latency_stats& other);
  latency_stats& operator=(const latency_stats& other);
  latency_stats(latency_stats&&) noexcept = default;
  latency_stats& operator=(latency_stats&&) noexcept = default;
  ~latency_stats();

  /// Adds one sample; negative and NaN samples count as 0.
  void add(double us) noexcept;
  /// Adds every sample of `other`.
  void merge(const latency_stats& other);

  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  /// The nearest-rank percentile, q in [0, 1]; 0 without samples.
  [[nodiscard]] double percentile(double q) const;
  [[nodiscard]] latency_summary summary() const;

private:
  static constexpr int min_exponent = -8;   // 2^-8 us: below that, the first bucket
  static constexpr int octaves = 44;        // up to 2^36 us, about 19 hours
  static constexpr std::size_t bucket_count = octaves * sub_buckets;
  using histogram = std::array<std::uint64_t, bucket_count>;

  static std::size_t bucket_of(double us) noexcept;
  static double midpoint(std::size_t bucket) noexcept;
  void spill();  // moves the exact samples into the histogram

  std::size_t count_ = 0;
  double min_ = 0, max_ = 0, mean_ = 0, m2_ = 0;  // Welford's running mean and squared deviations
  std::vector<double> exact_;                    // while count_ <= exact_samples
  std::unique_ptr<histogram> hist_;              // after that
};

/// Summarises samples (microseconds); see latency_stats.
latency_summary summarize(std::span<const double> samples_us);

/// {"count":N,"min_us":..,"p50_us":..,"p99_us":..,"p999_us":..,"max_us":..,
/// "mean_us":..,"stdev_us":..}: every value but count is null when there
/// are no samples. The JSON vocabulary's statistics object.
void to_json(nlohmann::json& j, const latency_summary& s);

/// One human line: "min 1.23 p50 ... stdev 0.45 us (N samples)".
std::string format_summary(const latency_summary& s);

}  // namespace fabric
