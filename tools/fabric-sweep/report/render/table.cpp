// The human table: a row per host, a cell per ordered pair, each found in
// O(1), and the lines that name the failed, slow, re-tested and worst.
// Above cells_up_to hosts no terminal shows the table: the lines alone,
// the pairs' lines capped (--csv, -j and the page have every pair). A
// worst host's failed pairs of one error are one line, its slow ones too.
#include "fabric-sweep/report/judge/judge.hpp"
#include "fabric-sweep/report/render/render.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

namespace sweep {

namespace {

std::string latency_cell(const merged_pair& p) {
  if (p.state == pair_state::unplanned) return ".";
  if (p.state == pair_state::failed) return "FAIL";
  if (p.state == pair_state::missing) return "?";
  std::string v = p.latency() ? fmt::format("{:.1f}", p.latency()->p50) : "ok";
  return p.state == pair_state::slow ? v + "!" : v;
}

/// bw: the row host's bandwidth to the column host.
std::string bandwidth_cell(const matrix& m, const merged_pair& p, std::size_t row) {
  if (p.state == pair_state::unplanned) return ".";
  if (p.state == pair_state::failed) return "FAIL";
  if (p.state == pair_state::missing) return "?";
  auto d = row == p.a ? p.a_to_b() : p.b_to_a();
  if (!d) return ".";
  auto bar = bar_for(m, p);
  return gbps_text(d->gbps) + (bar && d->gbps < *bar ? "!" : "");
}

/// " on rail R" for a pair of a plane, "" without rails.
std::string on_plane(const matrix& m, std::size_t plane) {
  return m.has_rails() ? " on " + m.planes[plane].name() : std::string();
}

/// The legend, then plane after plane (with rails, each under its name) a
/// row per host and a cell per ordered pair.
std::string cells_text(const matrix& m) {
  std::string s;
  std::vector<std::string> names;
  names.reserve(m.hosts.size());
  std::size_t w = 6;
  for (const auto& h : m.hosts) w = std::max(w, fabric::columns(names.emplace_back(fabric::printable_utf8(h))));
  bool bw = measures_bandwidth(m.check);
  if (kind_of(m.check).judged == judged_by::delivery)
    s += fmt::format("{}: ok when each of a pair heard all of the other's datagrams; FAIL failed, ? not reported\n",
                     check_name(m.check));
  else if (bw)
    s += "Gb/s of RDMA WRITE bandwidth from the row's host to the column's; ! below the bar, . not measured, FAIL failed, "
         "? not reported\n";
  else
    s += fmt::format("p50 {} (us) of each pair; ! slow, FAIL failed, ? not reported{}\n", check_measure(m.check),
                     m.count(pair_state::unplanned) > 0 ? ", . not in the plan" : "");
  for (std::size_t plane = 0; plane < m.planes.size(); ++plane) {
    if (m.has_rails()) s += fmt::format("{}:\n", m.planes[plane].name());
    s += fmt::format("{:<{}}", "", w);
    for (const auto& h : names) s += fmt::format(" {:>{}}", h, w);
    s += "\n";
    for (std::size_t i = 0; i < m.hosts.size(); ++i) {
      if ((i & 0x3f) == 0) fabric::throw_if_interrupted();
      s += fmt::format("{:<{}}", names[i], w);
      for (std::size_t k = 0; k < m.hosts.size(); ++k) {
        std::string cell = "-";
        if (i != k) {
          const auto& p = m.pair_of(i, k, plane);
          cell = bw ? bandwidth_cell(m, p, i) : latency_cell(p);
        }
        s += fmt::format(" {:>{}}", cell, w);
      }
      s += "\n";
    }
  }
  return s;
}

/// What a line says of the pairs at `at` (indices into m.pairs), all of
/// `state`: a failed pair's error (they share it), slow pairs' figures
/// (their range), and a slow pair's time before its re-tests.
std::string pairs_word(const matrix& m, pair_state state, const std::vector<std::size_t>& at) {
  const auto& first = m.pairs[at.front()];
  if (state == pair_state::failed) return fabric::printable_utf8(m.error_of(first));
  bool bw = measures_bandwidth(m.check);
  std::optional<double> lo, hi;
  for (auto i : at)
    if (auto f = m.pairs[i].figure()) lo = std::min(lo.value_or(*f), *f), hi = std::max(hi.value_or(*f), *f);
  if (!lo) return bw ? "slower than the bar" : "slower than the fleet";
  auto text = [&](double v) { return bw ? gbps_text(v) : fmt::format("{:.1f}", v); };
  auto range = text(*lo) == text(*hi) ? text(*lo) : fmt::format("{} to {}", text(*lo), text(*hi));
  if (bw) return fmt::format("{} Gb/s", range);
  if (at.size() == 1 && first.retests > 0 && first.first_p50_us)
    return fmt::format("p50 {:.1f} us, re-tested {} us", *first.first_p50_us, range);
  return fmt::format("p50 {} us", range);
}

/// The lines that name the pairs of `state`, failed or slow. A worst
/// host's such pairs, fold_from or more, that share an error (failed) or
/// not (slow), are one line ("failed: h7 <-> 999 hosts: ..."): a dead or
/// slow host among a thousand is one line, not 999. Then every other such
/// pair, a line each; pair_lines_up_to lines in all, the rest counted.
std::string pair_lines(const matrix& m, pair_state state) {
  constexpr std::size_t fold_from = 4;
  auto word = state_name(state);
  std::string s;
  std::size_t lines = 0, untold = 0;
  auto line = [&](const std::string& text, std::size_t pairs) {
    if (lines++ < pair_lines_up_to) s += text;
    else untold += pairs;
  };
  std::vector<bool> told(m.pairs.size(), false);
  for (const auto& worst : m.worst) {
    const auto& name = worst.first;
    auto i = static_cast<std::size_t>(std::find(m.hosts.begin(), m.hosts.end(), name) - m.hosts.begin());
    for (std::size_t plane = 0; plane < m.planes.size(); ++plane) {
      std::map<std::string, std::vector<std::size_t>> alike;  // error (slow: none) -> pair indices
      for (std::size_t k = 0; k < m.hosts.size(); ++k) {
        if (k == i) continue;
        auto at = m.index_of(i, k, plane);
        const auto& p = m.pairs[at];
        if (p.state == state && !told[at]) alike[state == pair_state::failed ? m.error_of(p) : std::string()].push_back(at);
      }
      for (const auto& [key, pairs] : alike) {
        if (pairs.size() < fold_from) continue;
        for (auto at : pairs) told[at] = true;
        line(fmt::format("{}: {} <-> {} hosts{}: {}\n", word, fabric::printable_utf8(name), pairs.size(),
                         on_plane(m, plane), pairs_word(m, state, pairs)),
             pairs.size());
      }
    }
  }
  for (std::size_t at = 0; at < m.pairs.size(); ++at) {
    const auto& p = m.pairs[at];
    if (p.state != state || told[at]) continue;
    line(fmt::format("{}: {} <-> {}{}: {}\n", word, fabric::printable_utf8(m.hosts[p.a]),
                     fabric::printable_utf8(m.hosts[p.b]), on_plane(m, p.plane), pairs_word(m, state, {at})),
         1);
  }
  if (untold > 0) s += fmt::format("{}: {} (--csv, -j)\n", word, fabric::counted(untold, "more pair"));
  return s;
}

}  // namespace

std::string format_matrix(const matrix& m) {
  if (m.fabric_check()) {
    std::string s = "no pair lines: a check of the fabric alone\n" + suspects_text(m);
    for (const auto& n : m.notes) s += fmt::format("note: {}\n", n);
    return s;
  }
  std::string s = m.hosts.size() <= cells_up_to
                      ? cells_text(m)
                      : fmt::format("{} hosts, check {}: no table above {} hosts (--html draws an overview, --csv "
                                    "writes every pair)\n",
                                    m.hosts.size(), check_name(m.check), cells_up_to);
  s += fmt::format("pairs: {} ok, {} slow, {} failed, {} missing", m.count(pair_state::ok), m.count(pair_state::slow),
                   m.count(pair_state::failed), m.count(pair_state::missing));
  s += fmt::format("; {}\n", bar_rule(m));
  s += pair_lines(m, pair_state::failed);
  s += pair_lines(m, pair_state::slow);
  // A pair still slow after its re-tests is named with the slow ones.
  std::size_t named = 0;
  for (const auto& p : m.pairs)
    if (p.retests > 0 && p.first_p50_us && p.state != pair_state::slow && named++ < pair_lines_up_to)
      s += fmt::format("re-tested: {} <-> {}{}: p50 {:.1f} us, then {} ({})\n", fabric::printable_utf8(m.hosts[p.a]),
                       fabric::printable_utf8(m.hosts[p.b]), on_plane(m, p.plane), *p.first_p50_us,
                       p.latency() ? fmt::format("{:.1f} us", p.latency()->p50) : std::string("no time"),
                       p.state == pair_state::ok     ? std::string_view("passed")
                       : p.state == pair_state::slow ? std::string_view("still slow")
                                                     : state_name(p.state));
  if (named > pair_lines_up_to)
    s += fmt::format("re-tested: {} (--csv, -j)\n", fabric::counted(named - pair_lines_up_to, "more pair"));
  if (!m.worst.empty()) {
    s += "worst hosts:";
    for (const auto& [h, k] : m.worst) s += fmt::format(" {} ({})", fabric::printable_utf8(h), k);
    s += "\n";
  }
  if (!m.worst_rails.empty()) {
    s += "worst rails:";
    for (const auto& [r, k] : m.worst_rails) s += fmt::format(" {} ({})", fabric::printable_utf8(r), k);
    s += "\n";
  }
  s += suspects_text(m);
  for (const auto& n : m.notes) s += fmt::format("note: {}\n", n);
  return s;
}

}  // namespace sweep
