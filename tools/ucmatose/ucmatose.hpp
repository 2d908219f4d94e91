#pragma once
/// ucmatose: many RC connections set up, used and torn down at once,
/// wire-compatible with rdma-core's ucmatose, with bounded waits, message
/// counts and per-step connection timings. The tool's entry points: its
/// options (options.hpp), its report (report.hpp) and the run.

#include "options.hpp"
#include "report.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/base/error.hpp"

namespace ucmatose {

/// Runs the client or the server; fills `r` as it goes, prints through
/// `con`, and returns the verdict. `opt` must have been through validate().
fabric::verdict run(const options& opt, report& r, fabric::console& con);

}  // namespace ucmatose
