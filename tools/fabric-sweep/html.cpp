// The report as a self-contained HTML page: an SVG heat map of the matrix.
#include "sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace sweep {

namespace {

std::string escape(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        if (c < 0x20 || c >= 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out;
}

/// Green at the fleet's median, through yellow, to red at `factor` times it.
std::string heat(double p50, double median, double factor) {
  double t = median > 0 ? std::clamp((p50 / median - 1) / std::max(factor - 1, 0.01), 0.0, 1.0) : 0;
  int r = static_cast<int>(std::lround(t < 0.5 ? 60 + 390 * t : 255));
  int g = static_cast<int>(std::lround(t < 0.5 ? 180 : 180 - 300 * (t - 0.5)));
  return fmt::format("rgb({},{},60)", std::clamp(r, 0, 255), std::clamp(g, 0, 255));
}

}  // namespace

std::string html_page(const matrix& m) {
  constexpr int cell = 36, label = 140;
  int n = static_cast<int>(m.hosts.size());
  int size = label + n * cell + 10;
  std::string svg = fmt::format(R"x(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{0}" font-family="sans-serif" font-size="11">)x", size);
  for (int i = 0; i < n; ++i) {
    auto h = escape(m.hosts[static_cast<std::size_t>(i)]);
    svg += fmt::format(R"x(<text x="{}" y="{}" text-anchor="end">{}</text>)x", label - 6, label + i * cell + cell / 2 + 4, h);
    svg += fmt::format(R"x(<text transform="translate({},{}) rotate(-60)">{}</text>)x", label + i * cell + cell / 2, label - 6, h);
  }
  auto index = [&](const std::string& h) {
    return static_cast<int>(std::find(m.hosts.begin(), m.hosts.end(), h) - m.hosts.begin());
  };
  for (const auto& p : m.pairs) {
    int a = index(p.a), b = index(p.b);
    std::string fill = p.state == "failed" ? "#222" : p.state == "missing" ? "#bbb"
                       : p.latency         ? heat(p.latency->p50, m.median_p50_us, 3.0)
                                           : "rgb(60,180,60)";
    std::string mark = p.state == "failed" ? "&#x2715;" : p.state == "missing" ? "?" : p.state == "slow" ? "!" : "";
    std::string title = fmt::format("{} &#x2194; {}: {}{}{}", escape(p.a), escape(p.b), p.state,
                                    p.latency ? fmt::format(", p50 {:.1f} us, p99 {:.1f} us", p.latency->p50, p.latency->p99)
                                    : p.state == "failed" ? ": " + escape(p.error)
                                                          : "",
                                    p.first_p50_us ? fmt::format(" (re-tested; first p50 {:.1f} us)", *p.first_p50_us) : "");
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      svg += fmt::format(R"x(<g><title>{}</title><rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#fff"/>)x", title,
                         label + x * cell, label + y * cell, cell, cell, fill);
      if (!mark.empty())
        svg += fmt::format(R"x(<text x="{}" y="{}" text-anchor="middle" fill="#fff" font-size="14">{}</text>)x",
                           label + x * cell + cell / 2, label + y * cell + cell / 2 + 5, mark);
      svg += "</g>";
    }
  }
  svg += "</svg>";

  std::string worst;
  for (const auto& [h, k] : m.worst) worst += fmt::format("<li>{} &#x2014; in {} bad pair{}</li>", escape(h), k, k == 1 ? "" : "s");
  std::string notes;
  for (const auto& note : m.notes) notes += fmt::format("<li>{}</li>", escape(note));
  return fmt::format(R"x(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fabric-sweep: {} hosts</title>
<style>body{{font-family:sans-serif;margin:2em}} .legend span{{display:inline-block;width:1.2em;height:1em;vertical-align:middle;margin:0 .3em 0 1em}}</style>
</head><body>
<h1>fabric-sweep: {} hosts, {} pairs, check {}</h1>
<p>{} ok, {} slow, {} failed, {} not reported. Median p50 {} {:.1f} &#xb5;s (MAD {:.1f} &#xb5;s).</p>
<p class="legend"><span style="background:rgb(60,180,60)"></span>at the median<span style="background:rgb(255,180,60)"></span>twice<span style="background:rgb(255,30,60)"></span>three times or more<span style="background:#222"></span>failed<span style="background:#bbb"></span>not reported</p>
{}
<h2>Worst hosts</h2><ul>{}</ul>
<h2>Notes</h2><ul>{}</ul>
</body></html>
)x",
                     n, n, m.pairs.size(), check_name(m.check), m.count("ok"), m.count("slow"), m.count("failed"),
                     m.count("missing"), check_measure(m.check), m.median_p50_us, m.mad_us, svg, worst.empty() ? "<li>none</li>" : worst,
                     notes.empty() ? "<li>none</li>" : notes);
}

}  // namespace sweep
