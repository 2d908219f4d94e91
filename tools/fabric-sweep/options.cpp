// The command line: the run's options, and the report subcommand's.
#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/rails.hpp"

#include "fabric/acm/acm.hpp"
#include "fabric/cli/completion.hpp"
#include "fabric/cli/json_values.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

namespace sweep {

using fabric::text_or_null;

namespace {

std::vector<std::string> check_words() {
  std::vector<std::string> out;
  for (const auto& k : check_kinds()) out.emplace_back(k.name);
  return out;
}

/// The largest -S of any check (validate holds each check to its own).
int largest_size() {
  int out = 1;
  for (const auto& k : check_kinds()) out = std::max(out, k.max_size);
  return out;
}

/// --check's help: every check's word and what it checks.
std::string check_help() {
  std::string out = "What each pair checks:";
  for (const auto& k : check_kinds()) out += fmt::format("{} {} ({})", out.back() == ':' ? "" : ",", k.name, k.summary);
  return out;
}

/// A number in `range`, or the word "auto".
CLI::Validator auto_or_real(option_range range) {
  auto number = fabric::cli::real(range.lo, range.hi);
  return {[number](std::string& value) -> std::string {
            if (value == "auto") return {};
            return number(value);
          },
          fmt::format("{}-{} or auto", range.lo, range.hi)};
}

/// Options given on a command line whose mode has no use for them are a
/// usage error, not silently ignored.
void refuse_given(const std::vector<CLI::Option*>& others, std::string_view mode) {
  for (const auto* o : others)
    if (o->count() > 0) fabric::cli::usage_error(fmt::format("{}: not an option of {}", o->get_name(), mode));
}

}  // namespace

std::optional<pcie_expectation> pcie_expectation_of(std::string_view text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view rest = t;
  pcie_expectation e;
  // One number of a few digits after its word; a leading zero is no number.
  auto number = [&rest](std::string_view word, unsigned& out) {
    if (!rest.starts_with(word)) return true;
    rest.remove_prefix(word.size());
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), out);
    if (ec != std::errc() || end == rest.data() || rest.front() == '0') return false;
    rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
    return true;
  };
  if (!number("x", e.width) || !number("gen", e.generation) || !rest.empty()) return std::nullopt;
  static constexpr std::array widths{1u, 2u, 4u, 8u, 12u, 16u, 32u};
  if (e.width != 0 && std::find(widths.begin(), widths.end(), e.width) == widths.end()) return std::nullopt;
  if (e.generation > 6 || (e.width == 0 && e.generation == 0)) return std::nullopt;
  return e;
}

std::string pcie_expectation_text(const pcie_expectation& e) {
  std::string out;
  if (e.width != 0) out += fmt::format("x{}", e.width);
  if (e.generation != 0) out += fmt::format("gen{}", e.generation);
  return out;
}

void add_options(CLI::App& app, options& opt) {
  auto& r = opt.run;
  auto* hosts = app.add_option("--hosts", r.hosts, "Every host of the sweep, Slurm host-list syntax node[01-16] (default: Slurm's node list)")
      ->type_name("LIST");
  auto* rank = app.add_option("--rank", r.rank, "This process's place in --hosts (default: from Slurm, or this host's name)")
      ->transform(fabric::cli::decimal(0, 65535));
  auto* address = app.add_option("--address", r.address, "Each host's RDMA address: {host} and {short} are replaced")
      ->capture_default_str();
  auto* address_file = app.add_option("--address-file", r.address_file, "A file of 'host address' lines")
      ->type_name(std::string(fabric::completion::file_type));
  auto* port = app.add_option("--port", r.port, "rdma_cm port of the first round; each pair of each round takes its own")
      ->transform(fabric::cli::decimal(1, 65535))->capture_default_str();
  auto* run_check = app.add_option_function<std::string>(
         "--check", [&r](const std::string& word) { r.check = check_of(word).value_or(check::ping); }, check_help())
      ->check(CLI::IsMember(check_words()))
      ->default_str(std::string(check_name(r.check)));
  auto* acm_service = app.add_option("--acm-service", r.acm_service,
                 "The ACM service of --check acm: a unix socket path (starting with /) or a host reached over TCP")
      ->default_str(std::string(fabric::acm::default_unix_path));
  auto* group = app.add_option("--group", r.group, "The multicast group of --check multicast")->capture_default_str();
  auto* rails = app.add_option("--rails", r.rails,
                               "Every rail of each host: 'auto' (its RDMA devices with an Active port), devices "
                               "(mlx5_0,mlx5_1) or address templates ({host}-ib0,{host}-ib1); rail i meets rail i")
      ->type_name("auto|LIST");
  auto* cross_rails = app.add_flag("--cross-rails", r.cross_rails,
                                   "With --rails: every rail of a host meets every rail of its peer, not rail i rail i");
  auto* intra = app.add_flag("--intra", r.intra,
                             "With --rails: each host's rails also meet one another after the rounds (check intra)");
  auto* count = app.add_option("-C,--count", r.count,
                               "Pings, connections, datagrams or lookups per pair; for bw, writes each way (instead of --duration)")
      ->transform(fabric::cli::decimal(1, 1'000'000))->default_str("100");
  auto* size = app.add_option("-S,--size", r.size, "Bytes per ping or datagram (up to 1 MiB), or per write (bw, up to 256 MiB)")
      ->transform(fabric::cli::decimal(1, largest_size()))->default_str("64, bw 1048576");
  auto* duration = app.add_option("--duration", r.duration_ms, "Milliseconds each direction writes (bw; instead of -C)")
      ->transform(fabric::cli::decimal(1, 3'600'000))->default_str("1000");
  auto* unidirectional = app.add_flag("--unidirectional", r.unidirectional,
                                      "bw: the client (the higher rank) writes, the server does not");
  auto* quick = app.add_flag("--quick", r.quick, "One round: each host of the lower half of the list with its peer in the upper half");
  auto* pairs = app.add_option("--pairs", r.pairs_file, "Meet only these pairs: a file of 'host host' or 'round host host' lines")
      ->type_name(std::string(fabric::completion::file_type));
  auto* timeout = fabric::cli::add_timeout_option(app, r.timeout_ms);
  auto* pair_timeout = app.add_option("--pair-timeout", r.pair_timeout_ms,
                                      "Longest a pair may take once the two met, its every wait included, in ms")
      ->transform(fabric::cli::decimal(1, 86'400'000))->default_str("--timeout");
  auto* retests = app.add_option("--retests", r.retests, "Extra meetings of each outlier pair after the rounds (0: none)")
      ->transform(fabric::cli::decimal(0, 10))->capture_default_str();
  auto* repeat = app.add_option("--repeat", r.repeat, "Sweeps to run, each --interval after the last began (0: until interrupted)")
      ->transform(fabric::cli::decimal(0, 1'000'000))->capture_default_str();
  auto* interval = app.add_option("--interval", r.interval_ms, "Milliseconds from one sweep's start to the next's")
      ->transform(fabric::cli::decimal(0, 86'400'000))->capture_default_str();
  auto& v = opt.verdict;
  auto* outlier_factor = app.add_option("--outlier-factor", v.outlier_factor,
                 "Latency checks: a pair is slow above this many times the healthy pairs' median time (or --expect-us)")
      ->transform(fabric::cli::real(outlier_factor_range.lo, outlier_factor_range.hi))->capture_default_str();
  auto* bw_fraction = app.add_option("--bw-fraction", v.bw_fraction,
                 "bw: a pair is slow below this fraction of the healthy pairs' median rate (or of --expect-gbps)")
      ->transform(fabric::cli::real(bw_fraction_range.lo, bw_fraction_range.hi))->capture_default_str();
  auto* expect_gbps = app.add_option_function<std::string>(
         "--expect-gbps",
         [&v](const std::string& text) {
           v.expect_gbps_auto = text == "auto";
           v.expect_gbps = v.expect_gbps_auto ? std::nullopt : std::optional(std::stod(text));
         },
         "bw: the Gb/s a pair should reach, whatever the fleet's; 'auto': each pair's from its two ports' rates")
      ->transform(auto_or_real(expect_gbps_range))->type_name("GBPS|auto");
  auto* expect_us = app.add_option("--expect-us", v.expect_us,
                                   "Latency checks: the median time (us) a pair should have, whatever the fleet's")
      ->transform(fabric::cli::real(expect_us_range.lo, expect_us_range.hi))->type_name("US");

  auto* rep = app.add_subcommand("report", "Merge the lines of every host into one matrix, JSON and HTML");
  rep->add_option("files", opt.report.files, "Output of the sweep's processes (default: standard input)")
      ->type_name(std::string(fabric::completion::file_type));
  rep->add_option("--check", opt.report.check, "The check to report, when the lines hold several (default: the first's)")
      ->check(CLI::IsMember(check_words()));
  rep->add_option("--html", opt.report.html, "Write the heat map here, a self-contained HTML page")
      ->type_name(std::string(fabric::completion::file_type));
  rep->add_option("--prometheus", opt.report.prometheus,
                  "Write node_exporter textfile-collector gauges here: per-host aggregates and the bad pairs")
      ->type_name(std::string(fabric::completion::file_type));
  rep->add_flag("--prometheus-pairs", opt.report.prometheus_pairs,
                "With --prometheus: every pair's series too (n(n-1)/2 x 2 series for n hosts)");
  rep->add_option("--csv", opt.report.csv, "Write one row per pair here, CSV")
      ->type_name(std::string(fabric::completion::file_type));
  rep->add_option("--outliers", opt.report.outliers,
                  "Write the slow and failed pairs here as ROUND HOSTA HOSTB lines, to run them again (--pairs)")
      ->type_name(std::string(fabric::completion::file_type));
  rep->add_option("--topology", opt.report.topology,
                  "Slurm's topology.conf: the page's overview groups hosts by their switch")
      ->type_name(std::string(fabric::completion::file_type));
  rep->add_option("--rail", opt.report.rail,
                  "With --rails: report only the pairs of this rail (judged by every rail's common bar)")
      ->type_name("RAIL");
  rep->add_option("--fabric", opt.report.fabric,
                  "A fabric document (discover) taken before the sweep; again: the one taken after it. Locates the "
                  "bad pairs on the fabric and names the suspect links")
      ->allow_extra_args(false)
      ->type_name(std::string(fabric::completion::file_type));
  rep->add_option("--suspects-csv", opt.report.suspects_csv, "With --fabric: write one row per suspect link here, CSV")
      ->type_name(std::string(fabric::completion::file_type));
  rep->fallthrough();  // -j, --json=lines and the verdict's options after "report" too
  std::vector<CLI::Option*> run_only{hosts,   rank,     address,  address_file, port,           run_check,
                                     acm_service, group, count, size,    duration,     unidirectional, quick,
                                     pairs,   timeout,  pair_timeout, retests, repeat,  interval, rails, cross_rails,
                                     intra};
  rep->callback([&opt, run_only, outlier_factor, bw_fraction, expect_gbps, expect_us] {
    refuse_given(run_only, "fabric-sweep report");
    opt.mode = mode::report;
    opt.report.given = {outlier_factor->count() > 0, bw_fraction->count() > 0, expect_gbps->count() > 0,
                        expect_us->count() > 0};
  });

  auto* health = app.add_subcommand(
      "health", "Check this host alone, for a node health checker: its devices' ports and PCIe links, and RC ping-pongs "
      "with itself and between its rails");
  health->add_option("--prometheus", opt.report.prometheus,
                     "Write the host's health as node_exporter textfile-collector gauges here")
      ->type_name(std::string(fabric::completion::file_type));
  auto& h = opt.health;
  health->add_option("--device", h.devices,
                     "Check these RDMA devices alone (comma-separated, or --device again; default: every device)")
      ->allow_extra_args(false)
      ->type_name(std::string(fabric::completion::device_type));
  health->add_option("--expect-ports", h.expect_ports,
                     "The devices must have this many Active ports (default: every port of theirs Active)")
      ->transform(fabric::cli::decimal(1, 4096))->type_name("N");
  health->add_option("--expect-rate", h.expect_rate_gbps,
                     "Fail when an Active port's rate, as the kernel reports it, is below this many Gb/s")
      ->transform(fabric::cli::real(0.001, 1e6))->type_name("GBPS");
  health->add_option("--expect-width", h.expect_width, "Fail when an Active port is not this wide (any case)")
      ->transform(CLI::IsMember({"1X", "2X", "4X", "8X", "12X"}, CLI::ignore_case))->type_name("WIDTH");
  health->add_option("--expect-speed", h.expect_speed, "Fail when an Active port's speed is not this (any case)")
      ->transform(CLI::IsMember({"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"}, CLI::ignore_case))
      ->type_name("SPEED");
  health->add_option("--expect-mtu", h.expect_mtu, "Fail when an Active port's active MTU is not this many bytes")
      ->check(CLI::IsMember({"256", "512", "1024", "2048", "4096"}))->type_name("BYTES");
  health->add_option_function<std::string>(
         "--expect-pcie", [&h](const std::string& text) { h.expect_pcie = pcie_expectation_of(text); },
         "Fail when a device's PCIe link trained below this: x16gen4, x16 or gen4 (any case; default: below what "
         "the device and its slot can do)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (pcie_expectation_of(text)) return {};
            return fmt::format("'{}': --expect-pcie takes xWIDTHgenN, xWIDTH or genN (e.g. x16gen4)",
                               fabric::printable(text));
          },
          ""))
      ->type_name("xWIDTHgenN");
  health->add_flag("--no-intra", h.no_intra,
                   "No RC ping-pong between each pair of this host's rails (for a fabric that does not route between them)");
  health->fallthrough();  // the address rule, --port, -C, -S, --timeout and the output options
  std::vector<CLI::Option*> sweep_only{hosts,    rank,           run_check, acm_service, group,          retests,
                                       repeat,   interval,       duration,  quick,       unidirectional, pairs,
                                       outlier_factor, bw_fraction, expect_gbps, expect_us, rails, cross_rails, intra};
  health->callback([&opt, sweep_only] {
    refuse_given(sweep_only, "fabric-sweep health");
    opt.mode = mode::health;
    // Each --device a list; a device named twice is checked once, in the
    // order first given (validate refuses an empty name).
    std::vector<std::string> devices;
    for (const auto& given : opt.health.devices)
      for (std::size_t at = 0;; ++at) {
        auto comma = given.find(',', at);
        auto name = given.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        if (std::find(devices.begin(), devices.end(), name) == devices.end()) devices.push_back(name);
        if (comma == std::string::npos) break;
        at = comma;
      }
    opt.health.devices = std::move(devices);
  });

  auto& d = opt.discover;
  auto* disc = app.add_subcommand(
      "discover", "Read the InfiniBand subnet from this host (as root): nodes, links, forwarding tables, port counters");
  disc->add_option("-o,--output", d.output, "Write the fabric document here, as a whole or not at all")
      ->type_name(std::string(fabric::completion::file_type));
  disc->add_option("--ca", d.ca, "Walk from this InfiniBand device (default: the first with an Active port)")
      ->type_name(std::string(fabric::completion::device_type));
  disc->add_option("--port", d.port, "Walk from this port of the device (default: its first Active one)")
      ->transform(fabric::cli::decimal(1, 254))->type_name("N");
  fabric::cli::add_timeout_option(*disc, d.timeout_ms);
  disc->add_flag("--no-counters", d.no_counters, "Read nodes, links and forwarding tables only, no port counters");
  disc->fallthrough();  // -j and --json=lines
  std::vector<CLI::Option*> not_discover{hosts,       rank,   address, address_file,   port,  run_check,   acm_service,
                                         group,       count,  size,    duration,       unidirectional, quick, pairs,
                                         timeout, pair_timeout, retests, repeat, interval, outlier_factor, bw_fraction,
                                         expect_gbps, expect_us, rails, cross_rails, intra};
  disc->callback([&opt, not_discover] {
    refuse_given(not_discover, "fabric-sweep discover");
    opt.mode = mode::discover;
  });
}

void validate(const options& opt) {
  if (opt.mode == mode::report) {
    const auto& r = opt.report;
    if (r.fabric.size() > 2)
      fabric::cli::usage_error(fmt::format("--fabric: given {} times; give the document taken before the sweep, and the "
                                           "one taken after it",
                                           r.fabric.size()));
    if (!r.suspects_csv.empty() && r.fabric.empty()) fabric::cli::usage_error("--suspects-csv: the suspects need --fabric");
    return;
  }
  if (opt.mode == mode::discover) return;
  for (const auto& d : opt.health.devices)
    if (d.empty() || d == "." || d == ".." ||
        std::any_of(d.begin(), d.end(), [](unsigned char c) { return c == '/' || std::isspace(c) != 0 || c < 0x20; }))
      fabric::cli::usage_error(d.empty() ? std::string("--device: an empty device name in the list")
                                         : fmt::format("--device '{}': not a device name", fabric::printable(d)));
  const auto& r = opt.run;
  if (!r.address_file.empty() && r.address != "{host}")
    fabric::cli::usage_error("--address and --address-file: give one");
  if (r.address.empty()) fabric::cli::usage_error("--address: an empty template");
  const auto& kind = kind_of(r.check);
  if (r.size && *r.size > kind.max_size)
    fabric::cli::usage_error(fmt::format("-S {}: --check {} takes at most {}", *r.size, kind.name, kind.max_size));
  if (kind.default_duration_ms == 0 && r.duration_ms)
    fabric::cli::usage_error(fmt::format("--duration: --check {} counts (-C), it does not run for a time", kind.name));
  if (kind.judged != judged_by::bandwidth && r.unidirectional)
    fabric::cli::usage_error("--unidirectional: only --check bw has directions");
  if (r.count && r.duration_ms) fabric::cli::usage_error("-C and --duration: give one (writes, or a time)");
  if (auto d = pair_duration(r); d && *d >= r.pair_timeout().count())
    fabric::cli::usage_error(fmt::format("--duration {}: the writes must end within {} {}", *d,
                                         r.pair_timeout_ms ? "--pair-timeout" : "--timeout", r.pair_timeout().count()));
  if (r.quick && !r.pairs_file.empty()) fabric::cli::usage_error("--quick and --pairs: give one");
  if (!kind.in_rounds && (r.quick || !r.pairs_file.empty()))
    fabric::cli::usage_error(fmt::format("--check {} has every host at once: no --quick or --pairs", kind.name));
  auto spec = rail_spec_of(r.rails);
  if (!spec.given()) {
    if (r.cross_rails) fabric::cli::usage_error("--cross-rails: give --rails, the rails to cross");
    if (r.intra || r.check == check::intra)
      fabric::cli::usage_error(fmt::format("{}: a host's rails meet one another: give --rails",
                                           r.intra ? "--intra" : "--check intra"));
    return;
  }
  if (r.check == check::acm || r.check == check::multicast)
    fabric::cli::usage_error(fmt::format("--rails: --check {} {}", kind.name,
                                         r.check == check::acm ? "looks up through the ACM service, on no rail of its own"
                                                               : "has every host in one group, not pairs on rails"));
  if (r.cross_rails && r.check == check::intra)
    fabric::cli::usage_error("--cross-rails: --check intra meets no peer, every rail of a host meets every other already");
}

// Keys are the long names, but for four whose long name is a key of
// another type in the documents (hosts an array of names, pairs a count,
// outliers the event's object, rails a host's rails): --hosts is
// hostlist, --pairs pairs_file, report --outliers outliers_file and
// --rails rail_list, so that one key keeps one type.
nlohmann::json options_json(const options& o) {
  if (o.mode == mode::report)
    return {{"files", o.report.files},
            {"check", text_or_null(o.report.check)},
            {"html", text_or_null(o.report.html)},
            {"prometheus", text_or_null(o.report.prometheus)},
            {"prometheus_pairs", o.report.prometheus_pairs},
            {"csv", text_or_null(o.report.csv)},
            {"outliers_file", text_or_null(o.report.outliers)},
            {"topology", text_or_null(o.report.topology)},
            {"rail", text_or_null(o.report.rail)},
            {"fabric", o.report.fabric},
            {"suspects_csv", text_or_null(o.report.suspects_csv)},
            {"outlier_factor", o.verdict.outlier_factor},
            {"bw_fraction", o.verdict.bw_fraction},
            {"expect_gbps", fabric::value_or_null(o.verdict.expect_gbps)},
            {"expect_gbps_auto", o.verdict.expect_gbps_auto},
            {"expect_us", fabric::value_or_null(o.verdict.expect_us)}};
  if (o.mode == mode::discover)
    return {{"output", text_or_null(o.discover.output)},
            {"ca", text_or_null(o.discover.ca)},
            {"port", fabric::value_or_null(o.discover.port)},
            {"timeout", o.discover.timeout_ms},
            {"no_counters", o.discover.no_counters}};
  if (o.mode == mode::health)
    return {{"address", o.run.address},
            {"address_file", text_or_null(o.run.address_file)},
            {"port", o.run.port},
            {"count", pair_count(o.run).value_or(100)},
            {"size", pair_size(o.run)},
            {"timeout", o.run.timeout_ms},
            {"pair_timeout", o.run.pair_timeout().count()},
            {"prometheus", text_or_null(o.report.prometheus)},
            {"device", text_or_null(fmt::format("{}", fmt::join(o.health.devices, ",")))},
            {"expect_ports", fabric::value_or_null(o.health.expect_ports)},
            {"expect_rate", fabric::value_or_null(o.health.expect_rate_gbps)},
            {"expect_width", text_or_null(o.health.expect_width)},
            {"expect_speed", text_or_null(o.health.expect_speed)},
            {"expect_mtu", fabric::value_or_null(o.health.expect_mtu)},
            {"expect_pcie", o.health.expect_pcie ? nlohmann::json(pcie_expectation_text(*o.health.expect_pcie)) : nullptr},
            {"no_intra", o.health.no_intra}};
  const auto& r = o.run;
  return {{"hostlist", text_or_null(r.hosts)},
          {"rank", fabric::value_or_null(r.rank)},
          {"address", r.address},
          {"address_file", text_or_null(r.address_file)},
          {"port", r.port},
          {"check", check_name(r.check)},
          {"acm_service", r.acm_service},
          {"group", r.group},
          {"rail_list", text_or_null(r.rails)},
          {"cross_rails", r.cross_rails},
          {"intra", r.intra},
          {"count", fabric::value_or_null(pair_count(r))},
          {"size", pair_size(r)},
          {"duration", fabric::value_or_null(pair_duration(r))},
          {"unidirectional", r.unidirectional},
          {"quick", r.quick},
          {"pairs_file", text_or_null(r.pairs_file)},
          {"timeout", r.timeout_ms},
          {"pair_timeout", r.pair_timeout().count()},
          {"retests", r.retests},
          {"repeat", r.repeat},
          {"interval", r.interval_ms},
          {"outlier_factor", o.verdict.outlier_factor},
          {"bw_fraction", o.verdict.bw_fraction},
          {"expect_gbps", fabric::value_or_null(o.verdict.expect_gbps)},
          {"expect_gbps_auto", o.verdict.expect_gbps_auto},
          {"expect_us", fabric::value_or_null(o.verdict.expect_us)}};
}

}  // namespace sweep
