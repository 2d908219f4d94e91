#include "fabric/base/stats.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace fabric {

latency_stats::latency_stats() = default;
latency_stats::~latency_stats() = default;

latency_stats::latency_stats(const latency_stats& other)
    : count_(other.count_), min_(other.min_), max_(other.max_), mean_(other.mean_), m2_(other.m2_),
      exact_(other.exact_), hist_(other.hist_ ? std::make_unique<histogram>(*other.hist_) : nullptr) {}

latency_stats& latency_stats::operator=(const latency_stats& other) {
  if (this != &other) *this = latency_stats(other);
  return *this;
}

std::size_t latency_stats::bucket_of(double us) noexcept {
  if (!(us >= std::ldexp(1.0, min_exponent))) return 0;  // also NaN
  int exp = 0;
  double mant = std::frexp(us, &exp);  // us = mant * 2^exp, mant in [0.5, 1)
  int octave = exp - 1 - min_exponent;
  if (octave >= octaves) return bucket_count - 1;
  auto sub = static_cast<std::size_t>((mant * 2.0 - 1.0) * sub_buckets);
  return static_cast<std::size_t>(octave) * sub_buckets + std::min(sub, sub_buckets - 1);
}

double latency_stats::midpoint(std::size_t bucket) noexcept {
  auto octave = static_cast<int>(bucket / sub_buckets);
  double sub = static_cast<double>(bucket % sub_buckets);
  return std::ldexp(1.0 + (sub + 0.5) / sub_buckets, octave + min_exponent);
}

void latency_stats::spill() {
  hist_ = std::make_unique<histogram>();
  hist_->fill(0);
  for (double v : exact_) ++(*hist_)[bucket_of(v)];
  exact_.clear();
  exact_.shrink_to_fit();
}

void latency_stats::add(double us) noexcept {
  if (!(us > 0)) us = 0;
  ++count_;
  if (count_ == 1) {
    min_ = max_ = us;
  } else {
    min_ = std::min(min_, us);
    max_ = std::max(max_, us);
  }
  double delta = us - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (us - mean_);
  if (hist_) {
    ++(*hist_)[bucket_of(us)];
    return;
  }
  try {
    if (exact_.capacity() == 0) exact_.reserve(64);
    exact_.push_back(us);
    if (exact_.size() > exact_samples) spill();
  } catch (const std::bad_alloc&) {
    // Out of memory for the histogram: keep the exact statistics; the
    // percentiles lose this sample.
  }
}

void latency_stats::merge(const latency_stats& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  auto n = static_cast<double>(count_), m = static_cast<double>(other.count_);
  double delta = other.mean_ - mean_;
  mean_ += delta * m / (n + m);
  m2_ += other.m2_ + delta * delta * n * m / (n + m);
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  if (!hist_ && !other.hist_ && exact_.size() + other.exact_.size() <= exact_samples) {
    exact_.insert(exact_.end(), other.exact_.begin(), other.exact_.end());
    return;
  }
  if (!hist_) spill();
  for (double v : other.exact_) ++(*hist_)[bucket_of(v)];
  if (other.hist_)
    for (std::size_t b = 0; b < bucket_count; ++b) (*hist_)[b] += (*other.hist_)[b];
}

double latency_stats::percentile(double q) const {
  if (count_ == 0) return 0;
  auto rank = std::min(static_cast<std::size_t>(q * static_cast<double>(count_)), count_ - 1);
  if (rank == 0) return min_;
  if (rank == count_ - 1) return max_;
  if (!hist_) {
    std::vector<double> sorted(exact_);
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(rank), sorted.end());
    return sorted[rank];
  }
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < bucket_count; ++b) {
    seen += (*hist_)[b];
    if (seen > rank) return std::clamp(midpoint(b), min_, max_);
  }
  return max_;
}

latency_summary latency_stats::summary() const {
  latency_summary s;
  s.count = count_;
  if (count_ == 0) return s;
  s.min = min_;
  s.max = max_;
  s.mean = mean_;
  s.stdev = std::sqrt(m2_ / static_cast<double>(count_));
  s.p50 = percentile(0.5);
  s.p99 = percentile(0.99);
  s.p999 = percentile(0.999);
  return s;
}

latency_summary summarize(std::span<const double> samples_us) {
  latency_stats stats;
  for (double v : samples_us) stats.add(v);
  return stats.summary();
}

void to_json(nlohmann::json& j, const latency_summary& s) {
  auto value = [&](double v) { return s.count == 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  j = nlohmann::json{{"count", s.count},         {"min_us", value(s.min)},   {"p50_us", value(s.p50)},
                     {"p99_us", value(s.p99)},   {"p999_us", value(s.p999)}, {"max_us", value(s.max)},
                     {"mean_us", value(s.mean)}, {"stdev_us", value(s.stdev)}};
}

std::string format_summary(const latency_summary& s) {
  return fmt::format("min {:.2f} p50 {:.2f} p99 {:.2f} p99.9 {:.2f} max {:.2f} mean {:.2f} stdev {:.2f} us ({} samples)",
                     s.min, s.p50, s.p99, s.p999, s.max, s.mean, s.stdev, s.count);
}

}  // namespace fabric
