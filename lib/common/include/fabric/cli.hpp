#pragma once
/// The edge of every tool: option parsing, the run wrapper that maps every
/// outcome to the shared exit-code table, and the JSON document.

#include "fabric/error.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <string_view>

namespace fabric::cli {

/// Output choices every tool shares.
struct output_options {
  bool json = false;  ///< -j/--json: one JSON document on stdout instead of human output
};

/// Adds -j/--json.
void add_output_options(CLI::App& app, output_options& out);

/// Adds a --timeout MS option (bounded waits), with the given default.
CLI::Option* add_timeout_option(CLI::App& app, int& timeout_ms, std::string_view what);

/// The tool's body: does the work, prints human output as it goes, and
/// returns its verdict. Failures may also be thrown as fabric::error.
using body_fn = std::function<exit_code()>;

/// Writes the tool's own JSON fields, "role" among them. Called after the
/// body, also when it threw, so that a partial report is printed.
using render_fn = std::function<void(nlohmann::json&)>;

/// Parses argv into `app`, runs `body` and prints the outcome: the JSON
/// document (common keys tool, role, ok, exit_code, error, plus the
/// rendered fields) with --json, or `tool: error: ...` on stderr. Returns
/// the process exit code. Also adds --version.
int run(std::string_view tool, CLI::App& app, int argc, char** argv, const output_options& out,
        const body_fn& body, const render_fn& render);

/// The lines rdma-core's udaddy, mckey and ucmatose end with, "test
/// complete" and "return status N", on stdout; nothing with --json.
void print_test_end(const output_options& out, exit_code code);

/// The common keys of a document; exposed for tests and for tools that
/// build documents themselves.
nlohmann::json make_document(std::string_view tool, exit_code code, std::string_view error_message);

}  // namespace fabric::cli
