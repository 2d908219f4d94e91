#pragma once
/// node_exporter's textfile-collector format (the Prometheus exposition
/// format, gauges only): what a cron job or a report leaves for the
/// collector to scrape.

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace fabric::cli {

/// One metric family after another: its HELP and TYPE lines, then its
/// samples. Label values are escaped as the format asks (backslash,
/// double quote, line feed) and otherwise kept as they are: valid UTF-8,
/// which the format takes.
class exposition {
public:
  using label = std::pair<std::string_view, std::string_view>;
  using labels = std::initializer_list<label>;
  /// Starts a family of gauges.
  void family(std::string_view name, std::string_view help);
  /// One sample of the family started last.
  void sample(std::string_view name, labels with, double value) {
    sample_with(name, std::span<const label>(with.begin(), with.size()), value);
  }
  /// The same, its labels made as it goes (some only sometimes there).
  void sample_with(std::string_view name, std::span<const label> with, double value);
  /// The text so far; the exposition is empty after.
  [[nodiscard]] std::string take() { return std::move(text_); }

private:
  std::string text_;
};

}  // namespace fabric::cli
