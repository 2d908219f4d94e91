// The command line: the original's options and their checks, and the
// options object of the JSON document.
#include "options.hpp"

#include "fabric/cli/completion.hpp"
#include "fabric/cli/console.hpp"
#include "fabric/cli/json_values.hpp"
#include "fabric/cli/range.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <pwd.h>
#include <strings.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace ib_acme {

using fabric::text_or_null;

using fabric::error;
using fabric::exit_code;

namespace {

/// A number as atoi reads it (a word reads as 0, as in the original), but
/// one outside lo..hi is a usage error rather than a value that wraps.
int atoi_in_range(const std::string& text, long lo, long hi, std::string_view what) {
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str()) return 0;
  if (errno == ERANGE || v < lo || v > hi)
    throw CLI::ValidationError(std::string(what), fmt::format("{} is out of range {}-{}", fabric::printable(text), lo, hi));
  return static_cast<int>(v);
}

/// -P's argument, read as the original does.
void parse_perf(const std::string& arg, options& opt) {
  auto starts = [&](std::string_view w) {
    return arg.size() >= 3 && strncasecmp(arg.c_str(), w.data(), 3) == 0;
  };
  if (arg.empty()) {
    opt.perf = perf_mode::row;
  } else if (starts("col")) {
    opt.perf = perf_mode::col;
  } else if (starts("all")) {
    opt.perf = perf_mode::all;
  } else if (arg == "s") {
    opt.perf = perf_mode::source;
  } else {
    int n = atoi_in_range(arg, 0, 255, "-P");
    opt.ep_index = n;
    opt.perf = n > 0 ? perf_mode::index : perf_mode::row;
  }
}

}  // namespace

void add_options(CLI::App& app, options& opt) {
  app.add_option_function<std::string>(
         "-f,--format",
         [&opt](const std::string& v) {
           char c = v.empty() ? '\0' : v[0];
           if (c != 'i' && c != 'n' && c != 'l' && c != 'g')
             throw CLI::ValidationError("-f", "address format must be i(p), n(ame), l(id) or g(id)");
           opt.format = c;
         },
         "Address format of -s and -d: i(p), n(ame), l(id), g(id); default: guess from each address")
      ->type_name("i|n|l|g");
  app.add_option("-s,--source", opt.source, "Source address(es) for path queries, range syntax node[1-3,5]")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_option("-d,--dest", opt.dest, "Destination address(es) for path queries, range syntax node[1-3,5]")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_flag("-v,--verify", opt.verify, "Verify each path with the SA: through the ACM service, and directly when a local InfiniBand port can ask it");
  app.add_flag("-c,--cache-only", opt.cache_only, "Answer from the ACM service's cache only");
  app.add_option_function<std::string>(
         "-e,--endpoints",
         [&opt](const std::string& v) {
           opt.endpoints = true;
           if (!v.empty()) opt.ep_index = atoi_in_range(v, 0, 255, "-e");
         },
         "List the service's endpoints: all, or endpoint N (1, 2, ...)")
      ->expected(0, 1)
      ->type_name("[N]");
  app.add_option_function<std::string>(
         "-P,--perf", [&opt](const std::string& v) { parse_perf(v, opt); },
         "Query performance counters: combined in a row (no value), col (combined, in a column), N (endpoint N), all (every endpoint), s (the endpoint of -s)")
      ->expected(0, 1)
      ->type_name("[col|N|all|s]");
  app.add_option("-S,--service", opt.service,
                 "ACM service(s): a unix socket path (starting with /) or a host reached over TCP; range syntax")
      ->capture_default_str();
  app.add_option_function<int>(
         "-C,--count", [&opt](int v) { opt.count = v == 0 ? 1 : v; }, "Repeat each resolution this many times")
      ->transform(fabric::cli::decimal(0, 100'000'000));
  app.add_option_function<std::string>(
         "-A,--addr-file",
         [&opt](const std::string& v) {
           opt.make_addr = true;
           if (!v.empty()) opt.addr_file = v;
         },
         "Generate the address configuration file (default ibacm_addr.cfg) from the local devices")
      ->expected(0, 1)
      ->type_name("[FILE]");
  app.add_option_function<std::string>(
         "-O,--opts-file",
         [&opt](const std::string& v) {
           opt.make_opts = true;
           if (!v.empty()) opt.opts_file = v;
         },
         "Generate the options file (default ibacm_opts.cfg)")
      ->expected(0, 1)
      ->type_name("[FILE]");
  app.add_option("-D,--dir", opt.dir, "Directory of the generated files")
      ->type_name(std::string(fabric::completion::dir_type))
      ->capture_default_str();
  app.add_flag("-V,--verbose", opt.verbose, "Verbose output");
  app.add_flag("--stats", opt.stats, "Print lookups per second and a latency summary per destination");
  app.add_flag("--probe", opt.probe,
               "Probe which ibacm options can work here: ports, SA, sockets, service, installed providers");
  app.add_option("--provider-path", opt.provider_path, "Directory of ibacm provider libraries (--probe)")
      ->type_name(std::string(fabric::completion::dir_type))
      ->capture_default_str();
  app.add_option("--port-file", opt.port_file, "File holding the ACM service's TCP port (6125 when absent)")
      ->type_name(std::string(fabric::completion::file_type))
      ->capture_default_str();
  app.add_option("--service-user", opt.service_user,
                 "Also trust an ACM service run by this user (root and you are always trusted)")
      ->type_name("USER");
  fabric::cli::add_timeout_option(app, opt.timeout);
}

void validate(const options& opt) {
  bool any_action = !opt.dest.empty() || opt.perf != perf_mode::none || opt.make_addr || opt.make_opts ||
                    opt.endpoints || opt.probe;
  if ((!opt.source.empty() && opt.dest.empty() && opt.perf != perf_mode::source) ||
      (opt.perf == perf_mode::source && opt.source.empty()))
    throw error(exit_code::usage, "-s needs -d, or -P s");
  if (!any_action) throw error(exit_code::usage, "nothing to do: give -d, -P, -e, -A, -O or --probe");
  // Bad ranges are bad input, found before any service is asked.
  for (const auto* r : {&opt.dest, &opt.source, &opt.service})
    if (!r->empty()) fabric::expand_range(*r);
  // A LID is 16 bits: 65538 must not become LID 2.
  if (opt.format == 'l')
    for (const auto* r : {&opt.dest, &opt.source}) {
      if (r->empty()) continue;
      for (const auto& lid : fabric::expand_range(*r)) try {
          (void)atoi_in_range(lid, 0, 0xffff, r == &opt.dest ? "-d" : "-s");
        } catch (const CLI::ValidationError&) {
          throw error(exit_code::usage,
                      fmt::format("{} {}: a LID is 0..65535", r == &opt.dest ? "-d" : "-s", fabric::printable(lid)));
        }
    }
  (void)service_user_uid(opt);
}

std::optional<uid_t> service_user_uid(const options& opt) {
  if (opt.service_user.empty()) return std::nullopt;
  if (const passwd* pw = ::getpwnam(opt.service_user.c_str())) return pw->pw_uid;
  const auto& u = opt.service_user;
  if (u.size() <= 9 && std::all_of(u.begin(), u.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return static_cast<uid_t>(std::stoul(u));
  throw error(exit_code::usage, fmt::format("--service-user {}: no such user", fabric::printable(opt.service_user)));
}


std::string_view format_name(char f) {
  switch (f) {
    case 'i': return "ip";
    case 'n': return "name";
    case 'l': return "lid";
    case 'g': return "gid";
    default: return "unknown";
  }
}

nlohmann::json options_json(const options& o) {
  nlohmann::json perf;  // null without -P
  switch (o.perf) {
    case perf_mode::none: break;
    case perf_mode::row: perf = "row"; break;
    case perf_mode::col: perf = "col"; break;
    case perf_mode::index: perf = o.ep_index; break;
    case perf_mode::all: perf = "all"; break;
    case perf_mode::source: perf = "source"; break;
  }
  return {{"format", o.format == 'u' ? nlohmann::json(nullptr) : nlohmann::json(format_name(o.format))},
          {"source", text_or_null(o.source)},
          {"dest", text_or_null(o.dest)},
          {"verify", o.verify},
          {"cache_only", o.cache_only},
          {"endpoints", o.endpoints ? nlohmann::json(o.ep_index) : nlohmann::json(nullptr)},
          {"perf", perf},
          {"service", o.service},
          {"count", o.count},
          {"addr_file", o.make_addr ? nlohmann::json(o.addr_file) : nlohmann::json(nullptr)},
          {"opts_file", o.make_opts ? nlohmann::json(o.opts_file) : nlohmann::json(nullptr)},
          {"dir", o.dir},
          {"verbose", o.verbose},
          {"stats", o.stats},
          {"probe", o.probe},
          {"provider_path", o.provider_path},
          {"port_file", o.port_file},
          {"service_user", text_or_null(o.service_user)},
          {"timeout", o.timeout.ms()}};
}

}  // namespace ib_acme
