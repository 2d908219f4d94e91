#pragma once
/// The one place a tool's output goes: human lines as rdma-core's tools
/// print them, or JSON (one document, or one object a line). Tool logic
/// hands over text and events; the console alone knows the output mode.

#include "fabric/base/error.hpp"
#include "fabric/base/text.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fabric {

/// How a tool prints its outcome.
enum class output_mode {
  human,     ///< the originals' text
  document,  ///< -j/--json: one JSON document on stdout at the end
  lines,     ///< --json=lines: one JSON object a line, events as they happen, the document last
};

/// The schema name of a tool's documents and lines, with its version:
/// "fabric-toolkit/rping/1", "fabric-toolkit/fabric-sweep/2"
/// (schemas/CHANGES.md says what each version changed).
std::string schema_name(std::string_view tool);

/// A JSON value as text whatever bytes its strings hold: bytes that are
/// not UTF-8 become U+FFFD. `indent` < 0 gives one line.
std::string dump_json(const nlohmann::json& j, int indent = -1);

/// This host's name, as every document and line names it ("unknown" when
/// the system will not say).
std::string host_name();

/// Hands a document's results over one at a time: a report of a million
/// pairs is written as it is rendered, never held whole.
using result_sink = std::function<void(const nlohmann::json& result)>;
using result_source = std::function<void(const result_sink& each)>;

/// Renders a tool's output. Thread-safe: concurrent connections print whole
/// lines. A write to a stdout whose reader went away (EPIPE) stops the run
/// with exit_code::output_closed.
class console {
public:
  console(std::string_view tool, output_mode mode);
  console(const console&) = delete;
  console& operator=(const console&) = delete;

  [[nodiscard]] std::string_view tool() const noexcept { return tool_; }
  [[nodiscard]] output_mode mode() const noexcept { return mode_; }

  /// The role events are tagged with ("client", "server", ...).
  void set_role(std::string_view role);
  /// The schema events name, for a subcommand whose documents have a
  /// schema of their own (default: the tool's, schema_name(tool)).
  void set_schema(std::string_view schema);

  /// A line of human output on stdout; nothing in the JSON modes.
  void line(std::string_view text);
  /// A line the originals print on stderr; nothing in the JSON modes.
  void note(std::string_view text);
  /// "tool: warning: text" on stderr, in every mode; text made printable.
  void warning(std::string_view text);
  /// A diagnostic line on stderr as given (-d debug output), in every mode.
  void diagnostic(std::string_view text);

  /// An event as it happens: in line mode one line
  /// {"schema","tool","host","role","time","event":kind, kind: payload()};
  /// nothing in the other modes, where `payload` is not called: a run of
  /// thousands of connections builds no JSON it will not print.
  template <class Payload>
  void event(std::string_view kind, Payload&& payload) {
    if (mode_ == output_mode::lines) write_event(kind, std::forward<Payload>(payload)());
  }

  /// The originals' closing lines of udaddy, mckey and ucmatose, "test
  /// complete" and "return status N"; human mode only.
  void test_end(exit_code code);

  /// The skeleton's end of a run: the error line on stderr in human mode,
  /// the document on stdout in the JSON modes. With `results`, the
  /// document's "results" array is written from it, item by item, and the
  /// verdict (summary, ok, exit_code, error) after it. When the results
  /// were cut short (Ctrl-C: exit code 130; their source failed: 8), the
  /// verdict says so and that exit code comes back; so does the code of a
  /// stdout that failed (9 its reader went away, 8 another error, said on
  /// stderr); nullopt otherwise.
  std::optional<exit_code> finish(nlohmann::json document, std::string_view error,
                                  const result_source& results = {});

private:
  void write(std::FILE* f, std::string_view text);
  void write_event(std::string_view kind, const nlohmann::json& payload);

  std::string tool_;
  output_mode mode_;
  std::string host_;
  std::string role_ = "none";
  std::string schema_;
  bool closed_ = false;      ///< stdout failed: nothing more is written there
  bool reader_gone_ = false; ///< it failed because its reader went away (EPIPE)
  std::mutex mutex_;
};

}  // namespace fabric
