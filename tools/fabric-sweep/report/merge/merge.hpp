#pragma once
/// The report's second stage: every line's word gathered into one record
/// per meeting of a pair, run by run; the latest run kept and each pair's
/// final word chosen (merge.cpp).

#include "fabric-sweep/report/merge/matrix.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sweep {

/// Builds the matrix from line after line: the pairs of `only` (default:
/// the check of the first pair line), the others counted in a note; of
/// those, the latest run's with pairs of the check (a run starts at its
/// earliest line's time, a line without one being as old as its stream's
/// last line of the same run and input; a line whose run is null joins
/// the latest run when it is no older than that run's start; lines
/// without a run key are one unnamed run); within
/// the run each pair's latest sweep of --repeat, the best of its re-tests.
class matrix_builder {
public:
  explicit matrix_builder(std::optional<check> only = std::nullopt);
  ~matrix_builder();
  matrix_builder(const matrix_builder&) = delete;
  matrix_builder& operator=(const matrix_builder&) = delete;

  /// One JSON text, and the label it came with (a rank's stream).
  void add(std::string_view label, std::string_view json);
  /// The end of one input (a file): a line without a time takes its
  /// stream's last time within one input and one run only.
  void end_of_input();
  /// The matrix, its pairs not yet judged (no pair is slow): the kept
  /// run chosen, lines without a run joined to it, the hosts put in
  /// order, each pair's final word taken, the notes on what was read.
  /// `lines` are the reader's counts. Throws a usage error when the check
  /// was given and no pair line has it, but lines of other checks came.
  matrix finish(const line_counts& lines = {});

private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace sweep
