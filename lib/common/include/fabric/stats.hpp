#pragma once
/// Latency statistics with perftest's conventions.

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <span>
#include <string>

namespace fabric {

/// Summary of a set of samples, all in microseconds.
struct latency_summary {
  std::size_t count = 0;
  double min = 0, p50 = 0, p99 = 0, p999 = 0, max = 0, mean = 0, stdev = 0;
};

/// Summarises samples (microseconds). Percentiles are nearest-rank on the
/// sorted samples at index floor(q * count), as perftest reports t_typical
/// (p50), t_99 and t_99.9; stdev is the population standard deviation.
latency_summary summarize(std::span<const double> samples_us);

/// {"min":..,"p50":..,"p99":..,"p999":..,"max":..,"mean":..,"stdev":..};
/// every value is null when there are no samples.
void to_json(nlohmann::json& j, const latency_summary& s);

/// One human line: "min 1.23 p50 ... stdev 0.45 us (N samples)".
std::string format_summary(const latency_summary& s);

}  // namespace fabric
