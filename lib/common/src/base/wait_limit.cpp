#include "fabric/base/wait_limit.hpp"

#include <algorithm>
#include <limits>

namespace fabric {

std::chrono::milliseconds wait_limit::each() const {
  // An unbounded `by` reads no clock: a per-wait limit costs nothing here.
  int left = by_.poll_timeout();
  if (left < 0) return each_ ? *each_ : std::chrono::milliseconds(std::numeric_limits<int>::max());
  std::chrono::milliseconds by(left);
  return each_ ? std::min(*each_, by) : by;
}

int wait_limit::ms() const {
  auto ms = each().count();
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(ms, 1, std::numeric_limits<int>::max()));
}

}  // namespace fabric
