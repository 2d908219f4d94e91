#pragma once
/// How a run of ib_acme speaks: the original's lines through the console
/// (nothing in the JSON modes), and the result events of --json=lines.

#include "ib_acme.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>

namespace ib_acme {

/// Human output and result events; shared by every part of a run.
class printer {
public:
  explicit printer(fabric::console& con) : con_(con) {}
  /// One formatted piece of the original's output; a trailing newline is
  /// the line's end.
  template <class... Args>
  void operator()(fmt::format_string<Args...> f, Args&&... args) const {
    raw(fmt::format(f, std::forward<Args>(args)...));
  }
  void raw(std::string text) const {
    if (con_.mode() != fabric::output_mode::human) return;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    con_.line(text);
  }
  /// "ib_acme: warning: text" on stderr, in every mode.
  void warning(std::string_view text) const { con_.warning(text); }
  /// A results item that is final.
  void result(const nlohmann::json& item) const {
    con_.event("result", [&]() -> const nlohmann::json& { return item; });
  }

private:
  fabric::console& con_;
};

/// A hard failure (no answer, a malformed one) ends the session with a
/// service, or the writing of a file; remembered to become the exit code
/// after the human output.
struct hard_failure {
  fabric::exit_code code = fabric::exit_code::ok;
  std::string message;
  /// Keeps the first failure.
  void note(const fabric::error& e);
};

}  // namespace ib_acme
