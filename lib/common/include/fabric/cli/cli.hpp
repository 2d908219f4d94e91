#pragma once
/// The skeleton of every tool: option parsing and validation, the run
/// wrapper that maps every outcome to the shared exit-code table, and the
/// JSON document. A tool declares its options, a check of their
/// combination, its body and its report's rendering; run() does the rest.

#include "fabric/cli/console.hpp"
#include "fabric/base/error.hpp"
#include "fabric/base/wait_limit.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string_view>

// CLI11's classes are only named here: <CLI/CLI.hpp> costs seconds to
// compile, so only the files that build or read a command line include it.
namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace fabric::cli {

/// Output choices every tool shares.
struct output_options {
  std::string json;  ///< -j/--json: "document" (also -j alone) or "lines"; empty for human output
  [[nodiscard]] output_mode mode() const noexcept {
    return json.empty() ? output_mode::human : json == "lines" ? output_mode::lines : output_mode::document;
  }
};

/// Adds -j/--json (one document) and --json=lines (one object a line).
void add_output_options(CLI::App& app, output_options& out);

/// The help text of --timeout, the same in every tool: what it bounds
/// (see wait_limit).
inline constexpr std::string_view timeout_help =
    "Longest any one wait may take, in ms: a host name's lookup, an address or a route to resolve, a connection "
    "to set up, each answer or completion from the peer";

/// Adds --timeout MS: the bound of every wait (wait_limit), its default
/// what `limit` holds.
CLI::Option* add_timeout_option(CLI::App& app, wait_limit& limit);

/// The same, in whole milliseconds (fabric-sweep, whose pairs read it).
CLI::Option* add_timeout_option(CLI::App& app, int& timeout_ms);

/// A count, size or port option: a whole number in [lo, hi] written in
/// decimal, as rdma-core's tools read theirs (atoi: "010" is ten; CLI11 by
/// itself reads it as octal 8 and "0x10" as 16). Surrounding blanks and a
/// leading + are taken; anything else is a usage error that says which
/// ("'5x' is not a whole number", "70000 is out of range 1-65535"). Used as
/// a transform: the option receives the plain decimal text.
CLI::Validator decimal(std::uint64_t lo, std::uint64_t hi);

/// The same for an option rdma-core reads with strtoul(text, NULL, 0):
/// decimal, 0x hex or 0-led octal (ucmatose -a).
CLI::Validator c_number(std::uint64_t lo, std::uint64_t hi);

/// A finite real number in [lo, hi] (factors, fractions, rates).
CLI::Validator real(double lo, double hi);

/// A usage error: the exit code is usage, the message says what is wrong.
[[noreturn]] void usage_error(const std::string& message);

/// -t read as rdma-core's tools read it (strtoul, any base): a value, and
/// a warning when the text was not all one number (a non-number is 0).
/// Throws a usage error for a negative number or one beyond 0-255.
struct tos_reading {
  std::uint8_t value = 0;
  std::string warning;  ///< empty when the text was a number
};
tos_reading read_tos(std::string_view text);

/// Adds -t,--tos, read once, as it is parsed, as rdma-core's tools read it
/// (read_tos: a value beyond 0-255 is a usage error there and then);
/// `take` gets the text as given and what it reads as.
CLI::Option* add_tos_option(CLI::App& app, std::string_view help,
                            std::function<void(const std::string& text, tos_reading read)> take);

/// What a tool gives the skeleton.
struct tool {
  std::string_view name;
  /// Checks the parsed options as a whole (what CLI11 cannot); throws
  /// usage_error. Runs before anything is opened or printed.
  std::function<void()> validate;
  /// Does the work, printing through the console as it goes, and returns
  /// the verdict. Failures may also be thrown as fabric::error.
  std::function<verdict(console&)> body;
  /// Writes the report's "role", "options", "results" and "summary" into
  /// the document (and "schema", for a subcommand whose documents have a
  /// schema of their own). Called after the body, also when it threw, so that a
  /// partial report is printed; and after a usage error.
  std::function<void(nlohmann::json&)> render;
};

/// Parses argv into `app`, validates, runs the body and prints the outcome:
/// human output and `tool: error: reason` on stderr (none when the verdict
/// was told already), or the JSON document.
/// Returns the process exit code. Also adds --version. A report of very
/// many results may leave them out of render: they are then taken from
/// `results` one at a time, as the document is written.
int run(const tool& t, CLI::App& app, int argc, char** argv, const output_options& out,
        const result_source& results = {});

/// The output mode argv asks for, read without CLI11: for a command line
/// that did not parse. Knows -j inside a cluster of flags (-jV) and
/// --json=VALUE.
output_mode mode_in_argv(const CLI::App& app, int argc, char** argv);

/// The document's common part: schema, tool, version, host, role "none",
/// ok, exit_code, error, and empty options, results and summary.
nlohmann::json make_document(std::string_view tool, const verdict& v);

/// An options object key for a long option name: "busy-poll" -> "busy_poll".
std::string option_key(std::string_view long_name);

/// The long names of every user option of `app` as option keys (help,
/// version and the JSON switch left out); for tests that hold each tool's
/// `options` object to its command line.
std::vector<std::string> option_keys(const CLI::App& app);

}  // namespace fabric::cli
