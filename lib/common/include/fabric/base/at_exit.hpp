#pragma once
/// A scope's last step, however it ends: a return, an error, Ctrl-C's
/// exception. What a flow did is taken into its report by one, also when
/// the flow was cut short.

#include <utility>

namespace fabric {

/// Calls `f` when it goes out of scope.
template <class F>
class at_exit {
public:
  explicit at_exit(F f) : f_(std::move(f)) {}
  at_exit(const at_exit&) = delete;
  at_exit& operator=(const at_exit&) = delete;
  ~at_exit() { f_(); }

private:
  F f_;
};

}  // namespace fabric
