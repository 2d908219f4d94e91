#include "fabric/cli.hpp"

#include "fabric/completion.hpp"
#include "fabric/wait.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <system_error>

namespace fabric::cli {

void add_output_options(CLI::App& app, output_options& out) {
  app.add_flag("-j,--json", out.json, "Print one JSON document on stdout instead of human output");
}

CLI::Option* add_timeout_option(CLI::App& app, int& timeout_ms, std::string_view what) {
  return app.add_option("--timeout", timeout_ms, std::string(what))
      ->check(CLI::Range(1, 86'400'000))
      ->capture_default_str();
}

void print_test_end(const output_options& out, exit_code code) {
  if (out.json) return;
  fmt::print("test complete\nreturn status {}\n", static_cast<int>(code));
  std::fflush(stdout);
}

nlohmann::json make_document(std::string_view tool, exit_code code, std::string_view error_message) {
  nlohmann::json doc;
  doc["tool"] = tool;
  doc["role"] = "none";
  doc["ok"] = code == exit_code::ok;
  doc["exit_code"] = static_cast<int>(code);
  doc["error"] = error_message.empty() ? nlohmann::json(nullptr) : nlohmann::json(error_message);
  return doc;
}

namespace {

bool argv_asks_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "-j" || a == "--json") return true;
  }
  return false;
}

void emit(std::string_view tool, bool json, exit_code code, const std::string& message, const render_fn& render) {
  if (!json) {
    if (!message.empty()) fmt::print(stderr, "{}: error: {}\n", tool, message);
    std::fflush(stdout);
    return;
  }
  auto doc = make_document(tool, code, message);
  if (render) {
    try {
      nlohmann::json fields;
      render(fields);
      for (auto& [key, value] : fields.items())
        if (key != "tool" && key != "ok" && key != "exit_code" && key != "error") doc[key] = value;
    } catch (const std::exception& e) {
      // A report that cannot be rendered must still leave a valid document.
      doc["render_error"] = e.what();
    }
  }
  std::cout << doc.dump(2) << std::endl;
}

}  // namespace

int run(std::string_view tool, CLI::App& app, int argc, char** argv, const output_options& out,
        const body_fn& body, const render_fn& render) {
  app.set_version_flag("--version", fmt::format("{} (fabric-toolkit) {}", tool, FABRIC_VERSION));
  // Used by the build to generate the shell completions; not a user option.
  if (argc == 3 && std::string_view(argv[1]) == "--print-completion") {
    std::string_view shell = argv[2];
    if (shell != "bash" && shell != "zsh") {
      fmt::print(stderr, "{}: error: --print-completion takes bash or zsh\n", tool);
      return static_cast<int>(exit_code::usage);
    }
    std::cout << (shell == "bash" ? completion::bash_script(tool, app) : completion::zsh_script(tool, app));
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    bool json = argv_asks_json(argc, argv);
    emit(tool, json, exit_code::usage, message, nullptr);
    if (!json) fmt::print(stderr, "Run with --help for more information.\n");
    return static_cast<int>(exit_code::usage);
  }

  install_interrupt_handler();
  exit_code code = exit_code::ok;
  std::string message;
  try {
    code = body();
  } catch (const fabric::error& e) {
    code = e.code();
    message = e.what();
  } catch (const CLI::ValidationError& e) {
    code = exit_code::usage;
    message = e.what();
  } catch (const std::system_error& e) {
    code = e.code().category() == std::generic_category() || e.code().category() == std::system_category()
               ? classify_errno(e.code().value())
               : exit_code::system;
    message = e.what();
  } catch (const std::bad_alloc&) {
    code = exit_code::system;
    message = "out of memory";
  } catch (const std::exception& e) {
    code = exit_code::system;
    message = e.what();
  }
  if (code == exit_code::interrupted && message.empty()) message = "interrupted";
  emit(tool, out.json, code, message, render);
  return static_cast<int>(code);
}

}  // namespace fabric::cli
