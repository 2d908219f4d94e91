// The matrix as CSV (RFC 4180): one row per pair, for a spreadsheet or a
// script; and the suspect links (report --fabric), one row each. Host
// names and errors come from the input, so every text field is quoted as
// the RFC says (and where a ';' would split it), a control character or a
// byte that is not UTF-8 is written as \xNN (UTF-8 stays itself), and a
// field a spreadsheet would take for a formula is led by a quote.
#include "fabric-sweep/report/render/render.hpp"

#include "fabric-sweep/discover/subnet.hpp"

#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>

namespace sweep {

namespace {

/// A field: quoted when it holds a separator (',', or ';' where a
/// spreadsheet's locale splits there) or a quote; a formula's first
/// character led by a quote wherever a cell could start, the field's
/// start or after a separator (a reader that splits there anyway would
/// take "a;=1+1" for a name and a formula).
std::string field(std::string_view text) {
  std::string out;
  bool cell_starts = true;
  for (char c : fabric::printable_utf8(text)) {
    if (cell_starts && (c == '=' || c == '+' || c == '-' || c == '@')) out += '\'';
    cell_starts = c == ',' || c == ';';
    if (c == '"') out += "\"\"";
    else out += c;
  }
  return out.find_first_of(",;\"") == std::string::npos ? out : "\"" + out + "\"";
}

std::string number(std::optional<double> v, int digits) {
  return v ? fmt::format("{:.{}f}", *v, digits) : std::string();
}

}  // namespace

std::string csv_text(const matrix& m) {
  // The rails, then with --fabric the suspect link that explains the
  // pair: last, so that a script that reads the columns before them reads on.
  const auto* located = m.located ? &*m.located : nullptr;
  std::string out = "a,b,state,check,sweep,round,p50_us,p99_us,a_to_b_gbps,b_to_a_gbps,retests,error,a_rail,b_rail";
  out += located != nullptr ? ",suspect_link\r\n" : "\r\n";
  auto check = check_name(m.check);
  std::size_t row = 0;
  for (std::size_t i = 0; i < m.pairs.size(); ++i) {
    const auto& p = m.pairs[i];
    if ((++row & 0xffff) == 0) fabric::throw_if_interrupted();
    if (p.state == pair_state::unplanned) continue;
    const auto* l = p.latency();
    auto ab = p.a_to_b(), ba = p.b_to_a();
    const auto& plane = m.planes[p.plane];
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}", field(m.hosts[p.a]), field(m.hosts[p.b]),
                       state_name(p.state), check, p.sweep, p.round, number(l ? std::optional(l->p50) : std::nullopt, 3),
                       number(l ? std::optional(l->p99) : std::nullopt, 3),
                       number(ab ? std::optional(ab->gbps) : std::nullopt, 3),
                       number(ba ? std::optional(ba->gbps) : std::nullopt, 3), p.retests,
                       field(p.state == pair_state::failed ? m.error_of(p) : std::string()), field(plane.a_rail),
                       field(plane.b_rail));
    if (located != nullptr) {
      const auto* s = located->explaining(i);
      out += "," + field(s != nullptr ? locate::link_name(*s) : std::string());
    }
    out += "\r\n";
  }
  return out;
}

std::string suspects_csv_text(const matrix& m) {
  std::string out = "rank,a_description,a_node_guid,a_port,b_description,b_node_guid,b_port";
  for (const auto& f : suspect_fields()) out += fmt::format(",{}", f.key);
  out += "\r\n";
  if (!m.located) return out;
  const auto& suspects = m.located->found.suspects;
  for (std::size_t i = 0; i < suspects.size(); ++i) {
    const auto& s = suspects[i];
    out += std::to_string(i + 1);
    for (const auto& e : s.ends) out += fmt::format(",{},{},{}", field(e.description), subnet::guid_text(e.node_guid), e.port);
    for (const auto& f : suspect_fields()) out += "," + field(f.text(s));
    out += "\r\n";
  }
  return out;
}

}  // namespace sweep
