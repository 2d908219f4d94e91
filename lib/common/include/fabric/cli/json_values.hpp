#pragma once
/// The JSON vocabulary's rule for a value that is not there: null, never a
/// missing key, an empty string or a zero.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace fabric {

/// A text field: null when the text is empty (an option not given).
inline nlohmann::json text_or_null(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

/// An optional field: its value, or null.
template <class T>
nlohmann::json value_or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace fabric
