// The report subcommand: its inputs read line by line, the matrix judged,
// the files asked for written (each whole or not at all), the table
// printed; and the report's JSON document.
#include "report.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/base/files.hpp"
#include "fabric/cli/json_values.hpp"
#include "fabric/base/socket.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace sweep {

using nlohmann::json;

namespace {

/// An input file, opened before any is read: a bad name is a usage error
/// before the work begins.
fabric::unique_fd open_input(const std::string& path) {
  fabric::unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd)
    throw fabric::error(fabric::exit_code::usage,
                        fmt::format("{}: cannot read it: {}", fabric::printable(path), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || S_ISDIR(st.st_mode))
    throw fabric::error(fabric::exit_code::usage, fmt::format("{}: cannot read it: a directory", fabric::printable(path)));
  return fd;
}

std::string read_whole(const std::string& path, std::size_t most) {
  auto fd = open_input(path);
  std::string text;
  char buf[65536];
  for (;;) {
    auto got = ::read(fd.get(), buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw fabric::error(fabric::exit_code::usage, fmt::format("{}: cannot read it: {}", fabric::printable(path), std::strerror(errno)));
    if (got == 0) return text;
    text.append(buf, static_cast<std::size_t>(got));
    if (text.size() > most)
      throw fabric::error(fabric::exit_code::usage, fmt::format("{}: longer than {} MiB", fabric::printable(path), most >> 20));
  }
}

json direction_json(const std::optional<direction_figures>& d) {
  if (!d) return nullptr;
  return {{"bytes", d->bytes}, {"elapsed_us", d->seconds * 1e6}, {"gbps", d->gbps}};
}

std::string error_word(const matrix& m, const merged_pair& p) {
  switch (p.state) {
    case pair_state::failed: return m.error_of(p);
    case pair_state::slow: return measures_bandwidth(m.check) ? "slower than the bar" : "slower than the fleet";
    case pair_state::missing: return "not reported";
    default: return {};
  }
}

/// The report's options, the verdict's as it judged (report_verdict).
json report_options_json(const options& opt, const matrix& m) {
  auto j = options_json(opt);
  j["outlier_factor"] = m.verdict.outlier_factor;
  j["bw_fraction"] = m.verdict.bw_fraction;
  j["expect_gbps"] = fabric::value_or_null(m.verdict.expect_gbps);
  return j;
}

}  // namespace

fabric::verdict judge(const matrix& m) {
  if (m.hosts.size() < 2) return {fabric::exit_code::test_failed, "no pair results in the input"};
  auto failed = m.count(pair_state::failed), slow = m.count(pair_state::slow), missing = m.count(pair_state::missing);
  if (failed + slow + missing == 0) return {};
  return {fabric::exit_code::test_failed,
          fmt::format("{} failed, {} slow, {} missing of {} pairs", failed, slow, missing, m.planned())};
}

void each_result(const matrix& m, const fabric::result_sink& sink) {
  bool bw = measures_bandwidth(m.check);
  std::size_t index = 0;
  for (const auto& p : m.pairs) {
    if (p.state == pair_state::unplanned) continue;
    json bandwidth = nullptr;
    if (bw && std::holds_alternative<bandwidth_figures>(p.figures))
      bandwidth = {{"a_to_b", direction_json(p.a_to_b())}, {"b_to_a", direction_json(p.b_to_a())},
                   {"gbps", fabric::value_or_null(p.figure())}};
    sink({{"kind", "pair"},
          {"index", index++},
          {"ok", p.state == pair_state::ok},
          {"error", p.state == pair_state::ok ? json(nullptr) : json(error_word(m, p))},
          {"a", m.hosts[p.a]},
          {"b", m.hosts[p.b]},
          {"state", state_name(p.state)},
          {"round", p.sweep == 0 ? json(nullptr) : json(p.round)},
          {"latency", p.latency() ? json(*p.latency()) : json(nullptr)},
          {"bandwidth", std::move(bandwidth)},
          {"sweep", p.sweep == 0 ? json(nullptr) : json(p.sweep)},
          {"retests", p.retests},
          {"first_p50_us", fabric::value_or_null(p.first_p50_us)}});
  }
}

void to_json(json& j, const options& opt, const matrix& m) {
  j["role"] = "report";
  j["options"] = report_options_json(opt, m);
  bool bw = measures_bandwidth(m.check);
  // The results are each_result's, written as the document is.
  json worst = json::array();
  for (const auto& [h, n] : m.worst) worst.push_back({{"host", h}, {"bad_pairs", n}});
  bool fleet_measured = m.latency_measured();
  json bar = nullptr;
  if (bw)
    bar = {{"p90_gbps", fabric::value_or_null(m.bar.best_gbps)},
           {"spread_gbps", fabric::value_or_null(m.bar.spread_gbps)},
           {"fraction", m.bar.bw_fraction},
           {"expect_gbps", fabric::value_or_null(m.bar.expect_gbps)},
           {"bar_gbps", fabric::value_or_null(m.bar.bar_gbps())}};
  j["summary"] = {{"check", check_name(m.check)},
                  {"hosts", m.hosts},
                  {"pairs", m.planned()},
                  {"passed", m.count(pair_state::ok)},
                  {"slow", m.count(pair_state::slow)},
                  {"failed", m.count(pair_state::failed)},
                  {"missing", m.count(pair_state::missing)},
                  {"median_p50_us", fleet_measured ? json(m.bar.fleet.median) : json(nullptr)},
                  {"mad_us", fleet_measured ? json(m.bar.fleet.mad) : json(nullptr)},
                  {"bandwidth_bar", std::move(bar)},
                  {"worst_hosts", std::move(worst)},
                  {"rounds", m.rounds},
                  {"sweep_us", fabric::value_or_null(m.sweep_us)},
                  {"rounds_slowest_us", m.rounds_slowest_us},
                  {"run", fabric::value_or_null(m.run.id)},
                  {"run_started", fabric::value_or_null(m.run.started)},
                  {"earlier_runs", m.run.earlier_runs},
                  {"earlier_run_lines", m.run.earlier_lines},
                  {"notes", m.notes}};
}

fabric::verdict report(const options& opt, matrix& m, fabric::console& con) {
  con.set_role("report");
  const auto& r = opt.report;
  // Every input and the topology opened first: a bad name costs nothing.
  std::vector<fabric::unique_fd> inputs;
  for (const auto& f : r.files) inputs.push_back(open_input(f));
  std::optional<std::string> topology;
  if (!r.topology.empty()) topology = read_whole(r.topology, std::size_t{16} << 20);

  matrix_builder builder(r.check.empty() ? std::nullopt : check_of(r.check));
  line_joiner lines([&](std::string_view label, std::string_view text) { builder.add(label, text); });
  if (inputs.empty()) read_fd(STDIN_FILENO, lines);
  for (auto& fd : inputs) {
    read_fd(fd.get(), lines);
    fd.reset();
  }
  lines.finish();
  m = builder.finish(opt.verdict, lines.counts(), r.given);

  auto write = [](const std::string& path, auto&& render) {
    if (path.empty()) return;
    fabric::throw_if_interrupted();
    auto text = render();
    fabric::throw_if_interrupted();
    fabric::write_file_atomically(path, text);
  };
  write(r.html, [&] {
    page_context ctx;
    ctx.options = fabric::dump_json(report_options_json(opt, m));
    ctx.generated = fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
    ctx.groups = topology ? groups_of_topology(*topology, m.hosts) : groups_of_names(m.hosts);
    return html_page(m, ctx);
  });
  write(r.prometheus, [&] { return prometheus_text(m, r.prometheus_pairs); });
  write(r.csv, [&] { return csv_text(m); });
  write(r.outliers, [&] { return rerun_text(m); });
  // The table is for a reader: JSON output has the pairs already.
  if (con.mode() == fabric::output_mode::human) {
    auto text = format_matrix(m);
    for (std::size_t at = 0, nl; at < text.size(); at = nl + 1) {
      nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      con.line(std::string_view(text).substr(at, nl - at));
    }
  }
  return judge(m);
}

}  // namespace sweep
