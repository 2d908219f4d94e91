// The command line: the options, their checks as a whole, and the options
// object of the JSON document.
#include "options.hpp"

#include "protocol.hpp"

#include "fabric/base/text.hpp"
#include "fabric/cli/completion.hpp"
#include "fabric/cli/json_values.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>


namespace rping {

using fabric::text_or_null;

void add_options(CLI::App& app, options& opt) {
  // Each chooses the side as it is read, so that the last one given wins,
  // as in the original's getopt loop (`rping -s ... -c` is a client).
  auto side = [&](const char* names, bool server, const char* what) {
    app.add_flag_callback(
           names,
           [&opt, server] {
             opt.server = server;
             opt.client = !server;
           },
           what)
        ->trigger_on_parse();
  };
  side("-s,--server", true, "Server side; to bind to any IPv6 address use -a ::0");
  side("-c,--client", false, "Client side");
  app.add_option("-a,--addr", opt.addr, "Address: the server a client connects to, or the address a server binds (default: any IPv4)")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_option("-I,--source", opt.source, "Source address a client binds to")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-p,--port", opt.port, "Port")->transform(fabric::cli::decimal(0, 65535))->capture_default_str();
  app.add_option("-C,--count", opt.count, "Pings to do; 0 pings forever")
      ->transform(fabric::cli::decimal(0, std::uint64_t{1} << 62))
      ->capture_default_str();
  app.add_option("-S,--size", opt.size, "Ping data size in bytes")
      ->transform(fabric::cli::decimal(min_size, max_size))
      ->capture_default_str();
  app.add_flag("-v,--verbose", opt.verbose, "Print ping data");
  app.add_flag("-V,--verify", opt.verify, "Verify ping data");
  app.add_flag("-d,--debug", opt.debug, "Print debug messages on stderr");
  app.add_flag("-P,--persistent", opt.persistent, "Persistent server: serve clients concurrently until interrupted");
  app.add_flag("-q,--self-qp", opt.self_created_qp, "Use a self-created QP whose state changes rping drives");
  app.add_flag("--stats", opt.stats, "Print a latency summary (min p50 p99 p99.9 max mean stdev)");
  app.add_option("--interval", opt.interval_ms, "Milliseconds to pause between pings")->transform(fabric::cli::decimal(0, 3'600'000));
  app.add_flag("--busy-poll", opt.busy_poll, "Poll the completion queue instead of sleeping on it (lowest latency)");
  fabric::cli::add_timeout_option(app, opt.timeout);
  app.add_option_function<std::string>(
         "--retry",
         [&opt](const std::string& v) {
           if (v.empty()) {
             opt.retry_ms = default_retry_ms;
             return;
           }
           auto ms = fabric::whole_number<int>(v);
           if (!ms || *ms > 86'400'000)
             throw CLI::ValidationError("--retry", fmt::format("'{}': milliseconds must be 0-86400000", fabric::printable(v)));
           opt.retry_ms = *ms;
         },
         fmt::format("Client: retry connecting for MS milliseconds (default {}) while no server answers",
                     default_retry_ms))
      ->expected(0, 1)
      ->type_name("[MS]");
}

void validate(const options& o) {
  if (!o.server && !o.client) fabric::cli::usage_error("choose a side: -s (server) or -c (client)");
  if (o.client && o.addr.empty()) fabric::cli::usage_error("a client needs -a ADDR, the server's address");
  if (o.persistent && !o.server) fabric::cli::usage_error("-P (persistent) is a server option");
}

// --server and --client are flags here, but `server` is an address (udaddy,
// ucmatose) or a host (fabric-sweep) in every other document: the JSON names
// them server_mode and client_mode, so that one key keeps one type.
nlohmann::json options_json(const options& o) {
  return {{"server_mode", o.server}, {"client_mode", o.client}, {"addr", text_or_null(o.addr)},
          {"source", text_or_null(o.source)}, {"port", o.port}, {"count", o.count},
          {"size", o.size},       {"verbose", o.verbose > 0},    {"verify", o.verify},
          {"debug", o.debug > 0}, {"persistent", o.persistent},  {"self_qp", o.self_created_qp},
          {"stats", o.stats},     {"interval", o.interval_ms},   {"busy_poll", o.busy_poll},
          {"timeout", o.timeout.ms()}, {"retry", o.retry_ms}};
}

}  // namespace rping
