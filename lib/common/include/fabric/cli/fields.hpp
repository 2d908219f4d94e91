#pragma once
/// A summary's values, each declared once with its JSON key and its human
/// words, as iproute2's print calls name both at once: one put writes the
/// value into the document's object and onto the human line, so that the
/// two never say different things.

#include "fabric/base/stats.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <concepts>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fabric::cli {

/// One value of a summary: its JSON key (the contract) and how a human
/// line says it. `text` is a fmt format of the value ("{} pings",
/// "sent {}", "data phase {:.3f} ms"); `joint` goes before it when the
/// line already says something; a number is multiplied by `scale` for the
/// text alone (1e-3: microseconds said as milliseconds).
struct field {
  std::string_view key;
  std::string_view text;
  std::string_view joint = ", ";
  double scale = 1;
};

/// Values put through their fields: a JSON object, and human lines.
class fields {
public:
  /// Starts a human line led by `head` ("udaddy: "). A line that says
  /// nothing after its head is left out.
  fields& line(std::string_view head = {});

  /// `value` under f.key, and f.text of it on the current line; `say`
  /// false keeps it off the line (a value the line does not give). A
  /// missing value (an empty optional) is null, and the line leaves it out.
  template <class T>
  fields& put(const field& f, const T& value, bool say = true) {
    json_[std::string(f.key)] = to_json_value(value);
    if (say && present(value)) append(f.joint, text_of(f, value));
    return *this;
  }

  /// Words of the line alone, after `joint` when the line already says
  /// something ("3 failed": a count the document does not hold).
  fields& say(std::string_view text, std::string_view joint = ", ");

  /// The object of every value put.
  [[nodiscard]] const nlohmann::json& json() const noexcept { return json_; }
  /// The lines that say something.
  [[nodiscard]] std::vector<std::string> lines() const;

private:
  struct text_line {
    std::string head, body;
  };

  template <class T>
  static nlohmann::json to_json_value(const T& v) {
    if constexpr (std::is_same_v<T, latency_stats>)
      return v.summary();
    else
      return v;
  }
  template <class T>
  static nlohmann::json to_json_value(const std::optional<T>& v) {
    return v ? to_json_value(*v) : nlohmann::json(nullptr);
  }

  template <class T>
  static bool present(const T&) {
    return true;
  }
  template <class T>
  static bool present(const std::optional<T>& v) {
    return v.has_value();
  }

  template <class T>
  static std::string text_of(const field& f, const T& v) {
    if constexpr (std::is_same_v<T, latency_summary>)
      return fmt::format(fmt::runtime(f.text), format_summary(v));
    else if constexpr (std::is_same_v<T, latency_stats>)
      return fmt::format(fmt::runtime(f.text), format_summary(v.summary()));
    else if constexpr (std::floating_point<T>)
      return fmt::format(fmt::runtime(f.text), v * f.scale);
    else
      return fmt::format(fmt::runtime(f.text), v);
  }
  template <class T>
  static std::string text_of(const field& f, const std::optional<T>& v) {
    return text_of(f, *v);
  }

  void append(std::string_view joint, const std::string& text);

  nlohmann::json json_ = nlohmann::json::object();
  std::vector<text_line> lines_;
};

}  // namespace fabric::cli
