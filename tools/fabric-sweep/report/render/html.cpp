// The report as a self-contained HTML page. Up to cells_up_to hosts
// an SVG heat map with a cell per ordered pair (its value written in it
// while cells are wide enough); above that an overview of groups of hosts
// (a switch's, a name prefix's), a block with bad pairs coloured by its
// worst and any other by its median pair, and the bad pairs in a table
// with a filter. Passing pairs take the green-to-yellow half of the scale
// and slow ones red, so that a colour never says worse than the verdict.
// No network fetches; the one script is inline, and the small page has none.
#include "fabric-sweep/report/judge/judge.hpp"
#include "fabric-sweep/report/render/render.hpp"

#include "fabric-sweep/discover/subnet.hpp"

#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace sweep {

namespace {

/// Text for the page: control characters and bytes that are not UTF-8
/// escaped (printable_utf8, the page being UTF-8), then HTML's own.
std::string escape(std::string_view text) {
  std::string out;
  for (char c : fabric::printable_utf8(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

/// Badness from 0 (the fleet's middle or best) to 1 (at the bar or past it).
double badness(const matrix& m, double figure) {
  auto middle = m.bar.group.median;
  auto bar = m.bar.value;
  if (measures_bandwidth(m.check)) {
    if (!bar) bar = middle * m.bar.bw_fraction;
    if (middle <= *bar) return figure < *bar ? 1.0 : 0.0;
    return std::clamp((middle - figure) / (middle - *bar), 0.0, 1.0);
  }
  if (middle <= 0) return 0;
  if (!bar || *bar <= middle) bar = middle * std::max(m.bar.outlier_factor, 1.01);
  return std::clamp((figure - middle) / (*bar - middle), 0.0, 1.0);
}

/// Green through yellow to red, continuously: 0 to 0.5 for passing
/// pairs (ok_heat), 1 for slow ones.
std::string heat(double t) {
  int r = static_cast<int>(std::lround(t < 0.5 ? 60 + 390 * t : 255));
  int g = static_cast<int>(std::lround(t < 0.5 ? 180 : 180 - 300 * (t - 0.5)));
  return fmt::format("rgb({},{},60)", std::clamp(r, 0, 255), std::clamp(g, 0, 255));
}

/// A passing pair's colour: green at the fleet's middle, yellow at the bar.
std::string ok_heat(const matrix& m, double figure) { return heat(badness(m, figure) / 2); }

constexpr std::string_view failed_fill = "#222", missing_fill = "#bbb", unplanned_fill = "#eee";

/// A figure as the page writes it.
std::string figure_text(const matrix& m, double f) {
  return measures_bandwidth(m.check) ? gbps_text(f) + " Gb/s" : fmt::format("{:.1f} &#xb5;s", f);
}

/// The figure of the cell in row `row`: a direction of a bw pair, else the pair's.
std::optional<double> cell_figure(const matrix& m, const merged_pair& p, std::size_t row) {
  if (!measures_bandwidth(m.check)) return p.figure();
  auto d = row == p.a ? p.a_to_b() : p.b_to_a();
  return d ? std::optional(d->gbps) : std::nullopt;
}

/// Whether figure `f` is what made its pair slow: a bw direction below the
/// bar (the other direction of a slow pair may be fine), any slow latency.
bool slow_figure(const matrix& m, const merged_pair& p, std::optional<double> f) {
  if (p.state != pair_state::slow) return false;
  if (!measures_bandwidth(m.check) || !f) return true;
  auto bar = bar_for(m, p);
  return !bar || *f < *bar;
}

/// The colour of pair `p` with figure `f` (a bw cell's: its direction's).
std::string fill_of(const matrix& m, const merged_pair& p, std::optional<double> f) {
  if (p.state == pair_state::failed) return std::string(failed_fill);
  if (p.state == pair_state::missing) return std::string(missing_fill);
  if (p.state == pair_state::unplanned) return std::string(unplanned_fill);
  if (slow_figure(m, p, f)) return heat(1.0);
  return f ? ok_heat(m, *f) : heat(0.0);
}

/// How wide a label is drawn at `font` pixels, an upper bound: a
/// sans-serif lower-case letter or digit takes at most 0.65 of the font's
/// size, a capital or one of a few wide letters up to 1; a wide character
/// counts as two columns.
int label_px(std::string_view label, int font) {
  auto text = fabric::printable_utf8(label);
  double ems = 0.65 * static_cast<double>(fabric::columns(text));
  for (char c : text)
    if (std::isupper(static_cast<unsigned char>(c)) || c == 'm' || c == 'w' || c == '@' || c == '%') ems += 0.35;
  return static_cast<int>(std::ceil(ems * font));
}

/// The margin left of and above the cells, wide enough for the longest row
/// label and as high as the longest column label, rotated by -60 degrees,
/// reaches (sin 60 < 1); and how far that label reaches right of its
/// column (cos 60 = 1/2).
struct label_room {
  int margin, overhang;
};
template <class Labels>
label_room room_for(const Labels& labels, int font) {
  int longest = 0;
  for (const auto& l : labels) longest = std::max(longest, label_px(l, font));
  return {longest + 2 * font, longest / 2 + font};
}

/// "suspect link #1: leaf03 port 6 - spine02 port 3" for a pair a suspect
/// link explains (report --fabric); empty for any other.
std::string suspect_words(const matrix& m, const merged_pair& p) {
  if (!m.located || m.located->suspect_of.empty()) return {};
  auto i = static_cast<std::size_t>(&p - m.pairs.data());
  const auto* s = m.located->explaining(i);
  if (s == nullptr) return {};
  auto rank = static_cast<std::size_t>(s - m.located->found.suspects.data()) + 1;
  return fmt::format("suspect link #{}: {}", rank, escape(locate::link_name(*s)));
}

std::string pair_title(const matrix& m, const merged_pair& p) {
  std::string t = fmt::format("{} &#x2194; {}: {}", escape(m.hosts[p.a]), escape(m.hosts[p.b]), state_name(p.state));
  if (const auto* l = p.latency()) t += fmt::format(", p50 {:.1f} &#xb5;s, p99 {:.1f} &#xb5;s", l->p50, l->p99);
  if (auto d = p.a_to_b()) t += fmt::format(", {} to {} {} Gb/s", escape(m.hosts[p.a]), escape(m.hosts[p.b]), gbps_text(d->gbps));
  if (auto d = p.b_to_a()) t += fmt::format(", {} to {} {} Gb/s", escape(m.hosts[p.b]), escape(m.hosts[p.a]), gbps_text(d->gbps));
  if (p.state == pair_state::failed) t += ": " + escape(m.error_of(p));
  if (p.first_p50_us) t += fmt::format(" (re-tested; first p50 {:.1f} &#xb5;s)", *p.first_p50_us);
  if (auto named = suspect_words(m, p); !named.empty()) t += "; " + named;
  return t;
}

/// An SVG's id: the first plane's as ever, each other plane's numbered.
std::string svg_id(std::string_view name, std::size_t plane) {
  return plane == 0 ? std::string(name) : fmt::format("{}-{}", name, plane);
}

/// Every ordered pair's cell, of one plane.
std::string cells_svg(const matrix& m, std::size_t plane) {
  auto n = m.hosts.size();
  bool values = n <= 32;
  int cell = values ? 44 : n <= 60 ? 14 : 9;
  int font = values ? 11 : 8;
  auto room = room_for(m.hosts, font);
  int label = room.margin;
  int size = label + static_cast<int>(n) * cell + 10;
  std::string svg = fmt::format(
      R"x(<svg xmlns="http://www.w3.org/2000/svg" id="{}" width="{}" height="{}" font-family="sans-serif" font-size="{}">)x",
      svg_id("heatmap", plane), size + room.overhang, size, font);
  for (std::size_t i = 0; i < n; ++i) {
    auto h = escape(m.hosts[i]);
    int at = label + static_cast<int>(i) * cell + cell / 2;
    svg += fmt::format(R"x(<text x="{}" y="{}" text-anchor="end">{}</text>)x", label - 6, at + 4, h);
    svg += fmt::format(R"x(<text transform="translate({},{}) rotate(-60)">{}</text>)x", at, label - 6, h);
  }
  for (std::size_t row = 0; row < n; ++row)
    for (std::size_t col = 0; col < n; ++col) {
      if (row == col) continue;
      const auto& p = m.pair_of(row, col, plane);
      auto f = cell_figure(m, p, row);
      // A direction --unidirectional did not write: as the table's ".".
      bool unmeasured = measures_bandwidth(m.check) && !f && (p.state == pair_state::ok || p.state == pair_state::slow);
      int x = label + static_cast<int>(col) * cell, y = label + static_cast<int>(row) * cell;
      svg += fmt::format(R"x(<g><title>{}</title><rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#fff"/>)x",
                         pair_title(m, p), x, y, cell, cell, unmeasured ? std::string(unplanned_fill) : fill_of(m, p, f));
      std::string mark = p.state == pair_state::failed ? "&#x2715;" : p.state == pair_state::missing ? "?" : "";
      if (unmeasured) mark = ".";
      bool slow = slow_figure(m, p, f);
      if (values && mark.empty() && f)
        mark = fmt::format("{:.{}f}{}", *f, *f < 100 ? 1 : 0, slow ? "!" : "");
      else if (mark.empty() && slow)
        mark = "!";
      if (!mark.empty())
        svg += fmt::format(R"x(<text x="{}" y="{}" text-anchor="middle" fill="{}" font-size="{}">{}</text>)x", x + cell / 2,
                           y + cell / 2 + 4, unmeasured ? "#666" : "#fff", values ? 11 : cell - 2, mark);
      svg += "</g>";
    }
  return svg + "</svg>";
}

/// How bad a pair is, to find a block's worst: the order of states, then
/// the figure.
double rank_of(const matrix& m, const merged_pair& p) {
  switch (p.state) {
    case pair_state::failed: return 4;
    case pair_state::missing: return 3;
    case pair_state::slow: return 2 + (p.figure() ? badness(m, *p.figure()) : 0) * 0.5;
    case pair_state::unplanned: return -0.5;
    default: return p.figure() ? badness(m, *p.figure()) : 0;
  }
}

/// One block of the overview: the pairs between two groups (or within one).
struct block {
  std::size_t pairs = 0, bad = 0;
  const merged_pair* worst = nullptr;
  std::optional<double> median;  ///< of its planned pairs' figures
};

/// `figures` is scratch space, reused from block to block.
block block_of(const matrix& m, const host_group& gx, const host_group& gy, bool same, std::size_t plane,
               std::vector<double>& figures) {
  block out;
  double worst_rank = -1;
  figures.clear();
  for (auto a : gx.hosts)
    for (auto b : gy.hosts) {
      if (a == b || (same && a > b)) continue;
      const auto& p = m.pair_of(a, b, plane);
      if (auto r = rank_of(m, p); r > worst_rank) {
        worst_rank = r;
        out.worst = &p;
      }
      if (p.state == pair_state::unplanned) continue;
      ++out.pairs;
      if (is_bad(p.state)) ++out.bad;
      if (auto f = p.figure()) figures.push_back(*f);
    }
  if (!figures.empty()) {
    auto mid = figures.begin() + static_cast<std::ptrdiff_t>(figures.size() / 2);
    std::nth_element(figures.begin(), mid, figures.end());
    out.median = *mid;
  }
  return out;
}

/// A block with bad pairs takes its worst pair's colour; any other its
/// median pair's: among a thousand passing pairs the worst is always near
/// the bar, which would colour a healthy fleet as nearly failing.
std::string overview_svg(const matrix& m, const std::vector<host_group>& groups, std::size_t plane) {
  auto g = groups.size();
  int cell = g <= 16 ? 40 : g <= 40 ? 20 : 12;
  constexpr int font = 11;
  // A row's label counts its hosts: "node0001 .. node0032 (32)".
  std::vector<std::string> rows;
  for (const auto& group : groups) rows.push_back(fmt::format("{} ({})", group.name, group.hosts.size()));
  auto room = room_for(rows, font);
  int label = room.margin;
  int size = label + static_cast<int>(g) * cell + 10;
  std::string svg = fmt::format(
      R"x(<svg xmlns="http://www.w3.org/2000/svg" id="{}" width="{}" height="{}" font-family="sans-serif" font-size="{}">)x",
      svg_id("overview", plane), size + room.overhang, size, font);
  for (std::size_t i = 0; i < g; ++i) {
    int at = label + static_cast<int>(i) * cell + cell / 2;
    svg += fmt::format(R"x(<text x="{}" y="{}" text-anchor="end">{}</text>)x", label - 6, at + 4, escape(rows[i]));
    svg += fmt::format(R"x(<text transform="translate({},{}) rotate(-60)">{}</text>)x", at, label - 6, escape(groups[i].name));
  }
  std::vector<double> figures;
  for (std::size_t x = 0; x < g; ++x) {
    fabric::throw_if_interrupted();
    for (std::size_t y = x; y < g; ++y) {
      auto b = block_of(m, groups[x], groups[y], x == y, plane, figures);
      if (!b.worst) continue;
      auto title = fmt::format("{} &#xd7; {}: {}, {} bad", escape(groups[x].name), escape(groups[y].name),
                               fabric::counted(b.pairs, "pair"), b.bad);
      if (b.median) title += fmt::format("; median {}", figure_text(m, *b.median));
      title += "; worst: " + pair_title(m, *b.worst);
      auto fill = b.bad > 0 || b.pairs == 0 ? fill_of(m, *b.worst, b.worst->figure())
                                            : b.median ? ok_heat(m, *b.median) : heat(0.0);
      for (auto [col, row] : {std::pair{x, y}, std::pair{y, x}}) {
        int px = label + static_cast<int>(col) * cell, py = label + static_cast<int>(row) * cell;
        svg += fmt::format(R"x(<g><title>{}</title><rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#fff"/>)x", title,
                           px, py, cell, cell, fill);
        if (b.bad > 0 && cell >= 20)
          svg += fmt::format(R"x(<text x="{}" y="{}" text-anchor="middle" fill="#fff">{}</text>)x", px + cell / 2, py + cell / 2 + 4,
                             b.bad);
        svg += "</g>";
        if (x == y) break;
      }
    }
  }
  return svg + "</svg>";
}

/// The rows of the bad pairs' table, at most `most`.
std::string bad_rows(const matrix& m, std::size_t most, std::size_t& shown) {
  std::string rows;
  shown = 0;
  for (const auto& p : m.pairs) {
    if (!is_bad(p.state)) continue;
    if (shown == most) break;
    ++shown;
    auto f = p.figure();
    auto rail = m.has_rails() ? fmt::format("<td>{}</td>", escape(m.planes[p.plane].name())) : std::string();
    rows += fmt::format("<tr><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td><td>{}</td>{}</tr>\n", escape(m.hosts[p.a]),
                        escape(m.hosts[p.b]), rail, state_name(p.state), f ? figure_text(m, *f) : std::string(),
                        escape(p.state == pair_state::failed ? m.error_of(p) : std::string()),
                        m.located ? fmt::format("<td>{}</td>", suspect_words(m, p)) : std::string());
  }
  return rows;
}

/// The options that differ from the defaults, a row each; none, a line.
std::string options_section(const page_context& ctx) {
  if (ctx.options.empty()) return "<p id=\"options\">Options: the defaults.</p>\n";
  std::string rows;
  for (const auto& [name, value] : ctx.options)
    rows += fmt::format("<tr><td><code>{}</code></td><td><code>{}</code></td></tr>", escape(name), escape(value));
  return fmt::format("<h2>Options</h2>\n<p>Those that differ from the defaults.</p>\n"
                     R"x(<table id="options"><thead><tr><th>option</th><th>value</th></tr></thead><tbody>{}</tbody></table>)x"
                     "\n",
                     rows);
}

/// The verdict's rule (bar_rule) as a sentence: "A pair is slow above ...".
std::string rule_section(const matrix& m) {
  auto rule = bar_rule(m);
  if (rule.starts_with("slow ")) rule = "a pair is " + rule;
  if (!rule.empty()) rule[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(rule[0])));
  return fmt::format(R"x(<p id="rule">{}.</p>)x", escape(rule));
}

/// The report's notes, when it has some.
std::string notes_section(const matrix& m) {
  if (m.notes.empty()) return {};
  std::string items;
  for (const auto& note : m.notes) items += fmt::format("<li>{}</li>", escape(note));
  return fmt::format("<h2>Notes</h2><ul id=\"notes\">{}</ul>\n", items);
}

/// The suspect links (report --fabric), worst first, a row each; then the
/// same by switch: each switch with a suspect port, and its ports, the
/// switch of the best-ranked suspect first.
std::string suspects_html(const matrix& m) {
  if (!m.located) return {};
  const auto& suspects = m.located->found.suspects;
  std::string out = fmt::format("<h2 id=\"suspects\">Suspect links: {}</h2>\n<p>On the fabric: {}.</p>\n", suspects.size(),
                                escape(located_words(m)));
  if (suspects.empty()) return out + "<p>No link explains the bad pairs, and none has evidence of its own.</p>\n";
  std::string head = "<th>#</th><th>link</th>";
  for (const auto& f : suspect_fields()) head += fmt::format("<th>{}</th>", escape(f.title));
  std::string rows;
  // Each switch's suspect ports: its name, then (rank, port, far end).
  std::vector<std::pair<std::uint64_t, std::string>> switches;
  std::vector<std::vector<std::string>> ports;
  for (std::size_t i = 0; i < suspects.size(); ++i) {
    const auto& s = suspects[i];
    rows += fmt::format("<tr><td>{}</td><td>{}</td>", i + 1, escape(locate::link_name(s)));
    for (const auto& f : suspect_fields()) rows += fmt::format("<td>{}</td>", f.said(s) ? escape(f.text(s)) : std::string());
    rows += "</tr>\n";
    for (std::size_t side = 0; side < 2; ++side) {
      const auto& e = s.ends[side];
      if (e.type != subnet::node_type::switch_node) continue;
      auto it = std::find_if(switches.begin(), switches.end(), [&](const auto& w) { return w.first == e.node_guid; });
      if (it == switches.end()) {
        switches.emplace_back(e.node_guid, e.description.empty() ? subnet::guid_text(e.node_guid) : e.description);
        ports.emplace_back();
        it = switches.end() - 1;
      }
      const auto& far = s.ends[1 - side];
      ports[static_cast<std::size_t>(it - switches.begin())].push_back(
          fmt::format("port {} (#{}, to {} port {})", e.port, i + 1,
                      far.description.empty() ? subnet::guid_text(far.node_guid) : far.description, far.port));
    }
  }
  out += fmt::format("<table id=\"suspect-links\"><thead><tr>{}</tr></thead><tbody>\n{}</tbody></table>\n", head, rows);
  if (switches.empty()) return out;
  out += "<h3>By switch</h3>\n<table id=\"by-switch\"><thead><tr><th>switch</th><th>node GUID</th><th>suspect ports</th></tr>"
         "</thead><tbody>\n";
  for (std::size_t w = 0; w < switches.size(); ++w) {
    std::string list;
    for (const auto& p : ports[w]) list += (list.empty() ? "" : "; ") + escape(p);
    out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td></tr>\n", escape(switches[w].second),
                       subnet::guid_text(switches[w].first), list);
  }
  return out + "</tbody></table>\n";
}

constexpr std::string_view filter_script = R"x(<script>
(function () {
  var box = document.getElementById("filter"), rows = document.querySelectorAll("#bad tbody tr");
  var count = document.getElementById("shown");
  box.addEventListener("input", function () {
    var words = box.value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; }), n = 0;
    for (var i = 0; i < rows.length; ++i) {
      var text = rows[i].textContent.toLowerCase(), hit = true;
      for (var k = 0; k < words.length; ++k) if (text.indexOf(words[k]) < 0) { hit = false; break; }
      rows[i].style.display = hit ? "" : "none";
      if (hit) ++n;
    }
    count.textContent = n;
  });
})();
</script>)x";

/// One plane's map: every pair's cell, or above cells_up_to hosts the
/// overview of their groups.
std::string map_of(const matrix& m, const std::vector<host_group>& groups, std::size_t plane) {
  if (m.hosts.size() <= cells_up_to) return cells_svg(m, plane);
  return fmt::format("<h2>Overview: {} groups of hosts</h2>\n<p>A block with bad pairs has its worst pair's colour and their "
                     "number; any other, its median pair's.</p>\n{}",
                     groups.size(), overview_svg(m, groups, plane));
}

/// With rails: each host (above cells_up_to hosts, each group) by rail, a
/// cell each, its bad pairs on that rail: a rail slower than its siblings
/// is a column, a host's bad adapter a cell.
std::string rails_svg(const matrix& m, const std::vector<host_group>& groups) {
  auto rails = m.rail_names();
  bool by_host = m.hosts.size() <= cells_up_to;
  std::vector<std::string> rows;
  std::vector<std::uint32_t> row_of(m.hosts.size(), 0);
  if (by_host) {
    for (std::uint32_t h = 0; h < m.hosts.size(); ++h) rows.push_back(m.hosts[h]), row_of[h] = h;
  } else {
    for (std::uint32_t g = 0; g < groups.size(); ++g) {
      rows.push_back(groups[g].name);
      for (auto h : groups[g].hosts) row_of[h] = g;
    }
  }
  std::vector<std::size_t> bad(rows.size() * rails.size(), 0), pairs(rows.size() * rails.size(), 0);
  auto column = [&](const std::string& r) {
    return static_cast<std::size_t>(std::find(rails.begin(), rails.end(), r) - rails.begin());
  };
  for (const auto& p : m.pairs) {
    if (p.state == pair_state::unplanned) continue;
    const auto& plane = m.planes[p.plane];
    for (auto [h, r] : {std::pair{p.a, &plane.a_rail}, std::pair{p.b, &plane.b_rail}}) {
      auto at = row_of[h] * rails.size() + column(*r);
      ++pairs[at];
      if (is_bad(p.state)) ++bad[at];
    }
  }
  constexpr int cell = 40, font = 11;
  // Room for the labels as long as they are: the rows' on the left, the
  // rails' rotated above.
  auto left = room_for(rows, font), above = room_for(rails, font);
  int label = left.margin, top = above.margin;
  int width = label + static_cast<int>(rails.size()) * cell + 10, height = top + static_cast<int>(rows.size()) * 20 + 10;
  std::string svg = fmt::format(
      R"x(<svg xmlns="http://www.w3.org/2000/svg" id="rails" width="{}" height="{}" font-family="sans-serif" font-size="{}">)x",
      width + above.overhang, height, font);
  for (std::size_t r = 0; r < rails.size(); ++r)
    svg += fmt::format(R"x(<text transform="translate({},{}) rotate(-60)">{}</text>)x", label + static_cast<int>(r) * cell + cell / 2,
                       top - 6, escape(rails[r]));
  for (std::size_t row = 0; row < rows.size(); ++row) {
    int y = top + static_cast<int>(row) * 20;
    svg += fmt::format(R"x(<text x="{}" y="{}" text-anchor="end">{}</text>)x", label - 6, y + 14, escape(rows[row]));
    for (std::size_t r = 0; r < rails.size(); ++r) {
      auto at = row * rails.size() + r;
      int x = label + static_cast<int>(r) * cell;
      svg += fmt::format(R"x(<g><title>{} on {}: {}, {} bad</title><rect x="{}" y="{}" width="{}" height="20" fill="{}" stroke="#fff"/>)x",
                         escape(rows[row]), escape(rails[r]), fabric::counted(pairs[at], "pair"), bad[at], x, y, cell,
                         pairs[at] == 0 ? std::string(missing_fill) : bad[at] > 0 ? heat(1.0) : heat(0.0));
      if (bad[at] > 0)
        svg += fmt::format(R"x(<text x="{}" y="{}" text-anchor="middle" fill="#fff">{}</text>)x", x + cell / 2, y + 14, bad[at]);
      svg += "</g>";
    }
  }
  return svg + "</svg>";
}

constexpr std::string_view plane_script = R"x(<script>
(function () {
  var pick = document.getElementById("plane"), planes = document.querySelectorAll("div.plane");
  pick.addEventListener("change", function () {
    for (var i = 0; i < planes.length; ++i) planes[i].style.display = planes[i].dataset.plane === pick.value ? "" : "none";
  });
})();
</script>)x";

/// The maps: one, or with rails the host-by-rail overview, then a map per
/// plane behind a selector (the first shown).
std::string maps_html(const matrix& m, const page_context& ctx) {
  auto groups = m.hosts.size() <= cells_up_to ? std::vector<host_group>()
                : ctx.groups.empty()         ? groups_of_names(m.hosts)
                                             : ctx.groups;
  if (!m.has_rails()) return map_of(m, groups, 0);
  std::string options, planes;
  for (std::size_t i = 0; i < m.planes.size(); ++i) {
    auto name = escape(m.planes[i].name());
    options += fmt::format(R"x(<option value="{}">{}</option>)x", i, name);
    planes += fmt::format(R"x(<div class="plane" data-plane="{}"{}><h2>{}</h2>{}</div>)x", i,
                          i == 0 ? "" : R"x( style="display:none")x", name, map_of(m, groups, i));
  }
  return fmt::format("<h2>Rails: bad pairs by {} and rail</h2>\n{}\n<p><label>Rail: <select id=\"plane\">{}</select></label></p>\n{}\n{}",
                     m.hosts.size() <= cells_up_to ? "host" : "group of hosts", rails_svg(m, groups), options, planes,
                     plane_script);
}

}  // namespace

std::vector<host_group> groups_of_names(const std::vector<std::string>& hosts) {
  std::vector<host_group> out;
  for (std::uint32_t i = 0; i < hosts.size(); ++i) {
    std::string_view h = hosts[i];
    auto end = h.find_last_not_of("0123456789");
    auto prefix = std::string(h.substr(0, end == std::string_view::npos ? 0 : end + 1));
    auto it = std::find_if(out.begin(), out.end(), [&](const host_group& g) { return g.name == prefix; });
    if (it == out.end()) {
      if (out.size() == 64) break;
      out.push_back({prefix, {}});
      it = out.end() - 1;
    }
    it->hosts.push_back(i);
  }
  std::size_t grouped = 0;
  for (const auto& g : out) grouped += g.hosts.size();
  if (out.size() >= 2 && grouped == hosts.size()) return out;
  // One prefix, or too many: blocks of consecutive hosts, at most 32.
  out.clear();
  std::size_t block = std::max<std::size_t>(1, (hosts.size() + 31) / 32);
  for (std::size_t at = 0; at < hosts.size(); at += block) {
    auto end = std::min(hosts.size(), at + block);
    host_group g{end - at == 1 ? hosts[at] : hosts[at] + " .. " + hosts[end - 1], {}};
    for (auto i = at; i < end; ++i) g.hosts.push_back(static_cast<std::uint32_t>(i));
    out.push_back(std::move(g));
  }
  return out;
}

std::string html_page(const matrix& m, const page_context& ctx) {
  auto n = m.hosts.size();
  bool overview = n > cells_up_to;
  std::string body;
  std::string scale_words;
  auto bar = m.bar.value;
  scale_words = fmt::format(
      "<span>{}</span><span class=\"scale\"></span><span>{}</span><span class=\"box\" style=\"background:{}\"></span>{} (slow)",
      m.bar.group.samples > 0 ? figure_text(m, m.bar.group.median) + " (median)" : std::string("the median"),
      bar ? figure_text(m, *bar) + " (the bar)" : std::string("the bar"), heat(1.0),
      measures_bandwidth(m.check) ? "below the bar" : "above the bar");
  std::string legend = fmt::format(
      R"x(<p class="legend">{}<span class="box" style="background:{}"></span>failed<span class="box" style="background:{}"></span>not reported{}</p>)x",
      scale_words, failed_fill, missing_fill,
      m.count(pair_state::unplanned) > 0
          ? fmt::format(R"x(<span class="box" style="background:{}"></span>not in the plan)x", unplanned_fill)
          : std::string());
  std::size_t shown = 0;
  body = maps_html(m, ctx);
  auto bad = m.count(pair_state::slow) + m.count(pair_state::failed) + m.count(pair_state::missing);
  constexpr std::size_t most_rows = 20000;
  std::string table;
  if (overview || bad > 0) {
    auto rows = bad_rows(m, most_rows, shown);
    // The filter is for the big page: the small one stays without a script.
    auto filter = overview ? fmt::format(R"x(<label>Filter: <input id="filter" type="search" placeholder="host, state or error"></label> <span id="shown">{}</span> shown)x", shown)
                           : std::string();
    table = fmt::format(
        R"x(<h2>Bad pairs: {}</h2>
<p>{}{}</p>
<table id="bad"><thead><tr><th>a</th><th>b</th>{}<th>state</th><th>figure</th><th>error</th>{}</tr></thead><tbody>
{}</tbody></table>
)x",
        bad, shown < bad ? fmt::format("The first {} of them (report --csv writes every pair). ", shown) : std::string(), filter,
        m.has_rails() ? "<th>rails</th>" : "", m.located ? "<th>explained by</th>" : "", rows);
  }
  // Where to look first, above the map: the worst hosts, a line or a few.
  std::string worst;
  for (std::size_t i = 0; i < m.worst.size() && i < 200; ++i)
    worst += fmt::format("{}{} ({})", i == 0 ? "" : ", ", escape(m.worst[i].first),
                         fabric::counted(static_cast<std::size_t>(m.worst[i].second), "bad pair"));
  if (m.worst.size() > 200) worst += fmt::format(" and {} more", m.worst.size() - 200);
  if (worst.empty()) worst = "none";
  if (!m.worst_rails.empty()) {
    worst += ". Worst rails: ";
    for (std::size_t i = 0; i < m.worst_rails.size(); ++i)
      worst += fmt::format("{}{} ({})", i == 0 ? "" : ", ", escape(m.worst_rails[i].first),
                           fabric::counted(static_cast<std::size_t>(m.worst_rails[i].second), "bad pair"));
  }
  std::string when;
  if (m.run.id) when += fmt::format("run {}", escape(*m.run.id));
  if (m.run.started) {
    auto t = static_cast<std::time_t>(*m.run.started);
    when += fmt::format("{}started {:%Y-%m-%d %H:%M:%S} UTC", when.empty() ? "" : ", ", fmt::gmtime(t));
  }
  if (!ctx.generated.empty()) when += fmt::format("{}reported {}", when.empty() ? "" : "; ", escape(ctx.generated));
  return fmt::format(R"x(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fabric-sweep: {}</title>
<style>body{{font-family:sans-serif;margin:2em}} .legend span{{display:inline-block;vertical-align:middle;margin:0 .3em}} .legend .box{{width:1.2em;height:1em;margin-left:1em}} .legend .scale{{width:10em;height:1em;background:linear-gradient(to right,rgb(60,180,60),rgb(255,180,60))}} table{{border-collapse:collapse}} td,th{{border:1px solid #ccc;padding:.2em .5em;text-align:left}} code{{word-break:break-all}}</style>
</head><body>
<h1>fabric-sweep: {}, {}, check {}</h1>
<p id="when">{}</p>
<p id="summary">{} ok, {} slow, {} failed, {} not reported.</p>
{}
<p id="worst">Worst hosts: {}.</p>
{}{}
{}
{}
{}{}
{}</body></html>
)x",
                     fabric::counted(n, "host"), fabric::counted(n, "host"), fabric::counted(m.planned(), "pair"),
                     check_name(m.check), when.empty() ? "time of the run unknown" : when,
                     m.count(pair_state::ok), m.count(pair_state::slow), m.count(pair_state::failed),
                     m.count(pair_state::missing), rule_section(m), worst.empty() ? "none" : worst, suspects_html(m),
                     m.fabric_check() ? std::string() : legend, m.fabric_check() ? std::string() : body, table,
                     notes_section(m), options_section(ctx), overview ? filter_script : std::string_view());
}

}  // namespace sweep
