#include "fabric/cli/cli.hpp"

#include "fabric/cli/completion.hpp"
#include "fabric/cli/console.hpp"
#include "fabric/base/wait.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string>
#include <system_error>

namespace fabric::cli {

void add_output_options(CLI::App& app, output_options& out) {
  app.add_flag("-j,--json{document}", out.json,
               "Print JSON on stdout instead of human output: one document (-j, --json), or one object a line, "
               "events as they happen and the document last (--json=lines)")
      // A bare -j or --json reads as "true", CLI11's word for a given flag.
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "true" || v == "document" || v == "lines") return {};
            return fmt::format("'{}': --json takes document or lines", printable(v));
          },
          "document|lines"))
      ->type_name("document|lines");
}

CLI::Option* add_timeout_option(CLI::App& app, wait_limit& limit) {
  return app
      .add_option_function<int>(
          "--timeout", [&limit](int ms) { limit = wait_limit(std::chrono::milliseconds(ms)); }, std::string(timeout_help))
      ->transform(decimal(1, 86'400'000))
      ->default_str(std::to_string(limit.ms()));
}

CLI::Option* add_timeout_option(CLI::App& app, int& timeout_ms) {
  return app.add_option("--timeout", timeout_ms, std::string(timeout_help))
      ->transform(decimal(1, 86'400'000))
      ->capture_default_str();
}

namespace {

/// `text` without the blanks around it.
std::string_view trimmed(std::string_view text) {
  auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

std::string range_text(std::uint64_t lo, std::uint64_t hi) { return fmt::format("{}-{}", lo, hi); }

/// A whole number in `base` (0: as strtoul reads it) within [lo, hi],
/// rewritten as plain decimal; or the message that says why not.
std::string read_whole(std::string& value, int base, std::uint64_t lo, std::uint64_t hi) {
  auto text = trimmed(value);
  auto what = base == 10 ? "a whole number" : "a whole number (decimal, 0x hex or 0 octal)";
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty() || text.front() < '0' || text.front() > '9')
    return fmt::format("'{}' is not {} ({})", printable(value), what, range_text(lo, hi));
  if (base == 0) {
    base = 10;
    if (text.size() > 1 && text.front() == '0') {
      bool hex = text[1] == 'x' || text[1] == 'X';
      base = hex ? 16 : 8;
      text.remove_prefix(hex ? 2 : 1);
      if (text.empty() && !hex) text = "0";
    }
  }
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (text.empty() || end != text.data() + text.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
    return fmt::format("'{}' is not {} ({})", printable(value), what, range_text(lo, hi));
  if (ec == std::errc::result_out_of_range || v < lo || v > hi)
    return fmt::format("{} is out of range {}", printable(trimmed(value)), range_text(lo, hi));
  value = std::to_string(v);
  return {};
}

}  // namespace

CLI::Validator decimal(std::uint64_t lo, std::uint64_t hi) {
  return {[lo, hi](std::string& v) { return read_whole(v, 10, lo, hi); }, range_text(lo, hi)};
}

CLI::Validator c_number(std::uint64_t lo, std::uint64_t hi) {
  return {[lo, hi](std::string& v) { return read_whole(v, 0, lo, hi); }, range_text(lo, hi)};
}

CLI::Validator real(double lo, double hi) {
  return {[lo, hi](std::string& value) -> std::string {
            auto text = std::string(trimmed(value));
            char* end = nullptr;
            double v = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
            if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
              return fmt::format("'{}' is not a number ({}-{})", printable(value), lo, hi);
            if (v < lo || v > hi) return fmt::format("{} is out of range {}-{}", printable(text), lo, hi);
            value = text;
            return {};
          },
          fmt::format("{}-{}", lo, hi)};
}

void usage_error(const std::string& message) { throw error(exit_code::usage, message); }

tos_reading read_tos(std::string_view text) {
  std::string s(text);
  auto first = std::find_if_not(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c) != 0; });
  if (first != s.end() && *first == '-')
    usage_error(fmt::format("-t {}: the type of service is 0-255", printable(text)));
  errno = 0;
  char* end = nullptr;
  unsigned long v = std::strtoul(s.c_str(), &end, 0);
  if (errno == ERANGE || v > 255) usage_error(fmt::format("-t {}: the type of service is 0-255", printable(text)));
  tos_reading r;
  r.value = static_cast<std::uint8_t>(v);
  if (end == s.c_str())
    r.warning = fmt::format("-t '{}' is not a number: type of service 0, as rdma-core reads it", printable(text));
  else if (*end != '\0')
    r.warning = fmt::format("-t '{}' is not all a number: type of service {}, as rdma-core reads it", printable(text),
                            v);
  return r;
}

CLI::Option* add_tos_option(CLI::App& app, std::string_view help,
                            std::function<void(const std::string& text, tos_reading read)> take) {
  // Taken as text: rdma-core reads -t with strtoul, so "-t tcp" is 0 there.
  return app
      .add_option_function<std::string>(
          "-t,--tos", [take = std::move(take)](const std::string& text) { take(text, read_tos(text)); },
          std::string(help))
      ->type_name("TOS");
}

nlohmann::json make_document(std::string_view tool, const verdict& v) {
  return nlohmann::json{
      {"schema", schema_name(tool)},
      {"tool", tool},
      {"version", FABRIC_VERSION},
      {"host", host_name()},
      {"role", "none"},
      {"ok", v.ok()},
      {"exit_code", static_cast<int>(v.code)},
      {"error", v.ok() ? nlohmann::json(nullptr) : nlohmann::json(v.reason)},
      {"options", nlohmann::json::object()},
      {"results", nlohmann::json::array()},
      {"summary", nlohmann::json::object()},
  };
}

std::string option_key(std::string_view long_name) {
  std::string key(long_name);
  for (auto& c : key)
    if (c == '-') c = '_';
  return key;
}

std::vector<std::string> option_keys(const CLI::App& app) {
  std::vector<std::string> keys;
  for (const auto* o : app.get_options()) {
    if (o->get_lnames().empty()) continue;
    const auto& name = o->get_lnames().front();
    if (name == "help" || name == "version" || name == "json") continue;
    keys.push_back(option_key(name));
  }
  return keys;
}

output_mode mode_in_argv(const CLI::App& app, int argc, char** argv) {
  auto mode = output_mode::human;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "--json") {
      mode = output_mode::document;
    } else if (a.starts_with("--json=")) {
      mode = a.substr(7) == "lines" ? output_mode::lines : output_mode::document;  // a bad value still asks for JSON
    } else if (a.size() > 1 && a[0] == '-' && a[1] != '-') {
      // A cluster of short flags: -j counts until a letter that takes a
      // value, whose value is the rest of the cluster.
      for (char c : a.substr(1)) {
        if (c == 'j') {
          mode = output_mode::document;
          break;
        }
        const auto* o = app.get_option_no_throw(std::string{'-', c});
        if (o == nullptr || o->get_expected_max() > 0) break;
      }
    }
  }
  return mode;
}

namespace {

/// Empty values are usage errors: "--name=" with nothing after it (CLI11
/// would take the next argument as the value: `--csv= sweep.jsonl` writing
/// over the input), and an empty argument (`--html "$UNSET"` writing no
/// page, and saying nothing).
void reject_empty_values(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") return;
    if (arg.starts_with("--") && arg.size() > 3 && arg.find('=') == arg.size() - 1)
      throw error(exit_code::usage, fmt::format("{}: the value after '=' is empty", printable(arg.substr(0, arg.size() - 1))));
    if (arg.empty())
      throw error(exit_code::usage, i > 1 ? fmt::format("{}: an empty value", printable(argv[i - 1]))
                                          : std::string("an empty argument"));
  }
}

/// An option given twice takes its last value, as getopt's loop in
/// rdma-core's tools does (`rping -C 1 ... -C 5` pings five times);
/// scripts that append to a command line rely on it.
void take_the_last_value(CLI::App& app) {
  for (auto* o : app.get_options())
    if (o->get_expected_max() == 1) o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  for (auto* sub : app.get_subcommands({})) take_the_last_value(*sub);
}

/// The outcome of a thrown exception.
verdict verdict_of(std::exception_ptr ep) {
  try {
    std::rethrow_exception(ep);
  } catch (const fabric::error& e) {
    return {e.code(), e.what()};
  } catch (const CLI::ValidationError& e) {
    return {exit_code::usage, e.what()};
  } catch (const std::system_error& e) {
    bool posix = e.code().category() == std::generic_category() || e.code().category() == std::system_category();
    return {posix ? classify_errno(e.code().value()) : exit_code::system, e.what()};
  } catch (const std::bad_alloc&) {
    return {exit_code::system, "out of memory"};
  } catch (const std::exception& e) {
    return {exit_code::system, e.what()};
  }
}

/// The run's document. A report that cannot be rendered fails the run
/// (exit code 8) in `v`, which the document says too.
nlohmann::json document(const tool& t, verdict& v, bool rendered, bool& streamed, bool can_stream) {
  auto doc = make_document(t.name, v);
  streamed = false;
  if (!rendered || !t.render) return doc;
  try {
    nlohmann::json fields;
    t.render(fields);
    for (const char* key : {"schema", "role", "options", "results", "summary"})
      if (fields.contains(key)) doc[key] = std::move(fields[key]);
    streamed = !fields.contains("results") && can_stream;
  } catch (const std::exception& e) {
    // A report that cannot be rendered must still leave a valid document.
    if (v.ok()) v = {exit_code::system, printable(fmt::format("cannot render the report: {}", e.what()))};
    doc = make_document(t.name, v);
  }
  return doc;
}

/// The command as typed up to the subcommand it reached: "fabric-sweep
/// report" for an error in report's options, whose --help is report's own.
std::string command_named(std::string_view tool, CLI::App& app) {
  std::string name(tool);
  for (CLI::App* at = &app; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    name += ' ' + at->get_name();
  }
  return name;
}

}  // namespace

int run(const tool& t, CLI::App& app, int argc, char** argv, const output_options& out, const result_source& results) {
  app.set_version_flag("--version", fmt::format("{} (fabric-toolkit) {}", t.name, FABRIC_VERSION));
  // Used by the build to generate the shell completions; not a user option.
  if (argc == 3 && std::string_view(argv[1]) == "--print-completion") {
    std::string_view shell = argv[2];
    if (shell != "bash" && shell != "zsh") {
      fmt::print(stderr, "{}: error: --print-completion takes bash or zsh\n", t.name);
      return static_cast<int>(exit_code::usage);
    }
    std::cout << (shell == "bash" ? completion::bash_script(t.name, app) : completion::zsh_script(t.name, app));
    return 0;
  }
  install_interrupt_handler();
  take_the_last_value(app);

  verdict v;
  bool parsed = false;
  try {
    reject_empty_values(argc, argv);
    app.parse(argc, argv);
    parsed = true;
    if (t.validate) t.validate();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    v = {exit_code::usage, e.what()};
  } catch (...) {
    v = verdict_of(std::current_exception());
    if (v.code != exit_code::usage) v = {exit_code::usage, v.reason};
  }
  if (!v.ok()) {
    // CLI11 quotes the offending argument as given.
    v.reason = shortened(printable(v.reason));
    console con(t.name, parsed ? out.mode() : mode_in_argv(app, argc, argv));
    bool streamed = false;
    auto doc = document(t, v, parsed, streamed, static_cast<bool>(results));
    // One line on a terminal, with where to look; JSON's error is the reason alone.
    auto told = con.mode() == output_mode::human
                    ? fmt::format("{} (see {} --help)", v.reason, command_named(t.name, app))
                    : v.reason;
    con.finish(std::move(doc), told, streamed ? results : result_source{});
    return static_cast<int>(v.code);
  }

  console con(t.name, out.mode());
  try {
    v = t.body(con);
    if (!v.ok() && v.reason.empty()) v.reason = std::string(to_string(v.code));
  } catch (...) {
    v = verdict_of(std::current_exception());
  }
  if (v.code == exit_code::interrupted && v.reason.empty()) v.reason = "interrupted";
  // Every message escapes what it quotes; this catches a library's own
  // text (and costs nothing on text already escaped).
  v.reason = shortened(printable(v.reason));
  // Human output prints no document: a big report is not rendered for nothing.
  bool streamed = false;
  auto doc = document(t, v, con.mode() != output_mode::human, streamed, static_cast<bool>(results));
  if (auto cut = con.finish(std::move(doc), v.ok() || v.told ? std::string_view{} : std::string_view{v.reason},
                            streamed ? results : result_source{}))
    return static_cast<int>(*cut);
  return static_cast<int>(v.code);
}

}  // namespace fabric::cli
