// The report subcommand: its inputs read line by line, the matrix judged,
// the files asked for written (each whole or not at all), the table
// printed; and the report's JSON document.
#include "fabric-sweep/report/report.hpp"

#include "fabric-sweep/discover/document.hpp"

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
#include <span>

namespace sweep {


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

}  // namespace

namespace {

matrix merged(std::span<const std::vector<std::string>> inputs, const verdict_options& o, std::optional<check> only,
              const verdict_given& given) {
  matrix_builder b(only);
  line_joiner j([&](std::string_view label, std::string_view text) { b.add(label, text); });
  for (const auto& lines : inputs) {
    for (const auto& l : lines) {
      j.feed(l);
      j.feed("\n");
    }
    j.end_of_input();
    b.end_of_input();
  }
  j.finish();
  auto m = b.finish(j.counts());
  judge_pairs(m, o, given);
  return m;
}

}  // namespace

matrix merge(const std::vector<std::string>& lines, const verdict_options& o, std::optional<check> only,
             const verdict_given& given) {
  return merged({&lines, 1}, o, only, given);
}

matrix merge_inputs(const std::vector<std::vector<std::string>>& inputs, const verdict_options& o,
                    std::optional<check> only, const verdict_given& given) {
  return merged(inputs, o, only, given);
}

fabric::verdict report(const options& opt, matrix& m, fabric::console& con) {
  con.set_role("report");
  const auto& r = opt.report;
  // Every input and the topology opened first: a bad name costs nothing.
  std::vector<fabric::unique_fd> inputs;
  for (const auto& f : r.files) inputs.push_back(open_input(f));
  std::vector<fabric::unique_fd> documents;
  for (const auto& f : r.fabric) documents.push_back(open_input(f));
  std::optional<std::string> topology;
  if (!r.topology.empty()) topology = read_whole(r.topology, std::size_t{16} << 20);
  // The fabric documents before the lines: a document that is not one
  // costs no sweep's reading. Given twice: the first before, the second after.
  std::vector<subnet::reading> fabrics;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    fabrics.push_back(subnet::read_document_fd(documents[i].get(), r.fabric[i]));
    documents[i].reset();
  }

  matrix_builder builder(r.check.empty() ? std::nullopt : check_of(r.check));
  line_joiner lines([&](std::string_view label, std::string_view text) { builder.add(label, text); });
  // A fabric check of its own reads no terminal: its pairs would be typed.
  if (inputs.empty() && (fabrics.empty() || ::isatty(STDIN_FILENO) == 0)) read_fd(STDIN_FILENO, lines);
  for (auto& fd : inputs) {
    read_fd(fd.get(), lines);
    builder.end_of_input();
    fd.reset();
  }
  lines.finish();
  m = builder.finish(lines.counts());
  judge_pairs(m, opt.verdict, r.given);
  if (!r.rail.empty()) keep_rail(m, r.rail);
  if (!fabrics.empty()) {
    for (std::size_t i = 0; i < fabrics.size(); ++i)
      for (auto& note : fabrics[i].notes) m.notes.push_back(fmt::format("{}: {}", fabric::printable(r.fabric[i]), note));
    locate_pairs(m, fabrics.front().model, fabrics.size() > 1 ? &fabrics.back().model : nullptr);
  }
  fabrics.clear();

  auto write = [](const std::string& path, auto&& render) {
    if (path.empty()) return;
    fabric::throw_if_interrupted();
    auto text = render();
    fabric::throw_if_interrupted();
    fabric::write_file_atomically(path, text);
  };
  write(r.html, [&] {
    page_context ctx;
    ctx.options = changed_options(report_options_json(opt, m), default_report_options_json());
    ctx.generated = fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
    ctx.groups = topology ? groups_of_topology(*topology, m.hosts) : groups_of_names(m.hosts);
    return html_page(m, ctx);
  });
  write(r.prometheus, [&] { return prometheus_text(m, r.prometheus_pairs); });
  write(r.csv, [&] { return csv_text(m); });
  write(r.suspects_csv, [&] { return suspects_csv_text(m); });
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
