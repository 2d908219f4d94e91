#pragma once
/// A deadline that moves forward with progress, for waits that should give
/// up only after a stretch of time in which nothing happened.

#include "fabric/base/wait.hpp"

#include <chrono>

namespace fabric {

/// Expires `idle` after the last touch().
class idle_deadline {
public:
  explicit idle_deadline(std::chrono::milliseconds idle) : idle_(idle), until_(deadline::after(idle)) {}

  /// Something happened: restart the idle period.
  void touch() { until_ = deadline::after(idle_); }
  [[nodiscard]] const deadline& get() const noexcept { return until_; }
  [[nodiscard]] std::chrono::milliseconds idle() const noexcept { return idle_; }

private:
  std::chrono::milliseconds idle_;
  deadline until_;
};

}  // namespace fabric
