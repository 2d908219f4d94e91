// The suspect links' one description, that the text, the JSON, the CSV,
// the page and the gauges all read; and the text report's section.
#include "fabric-sweep/report/render/render.hpp"

#include "fabric-sweep/discover/subnet.hpp"

#include "fabric/base/text.hpp"

#include <fmt/format.h>

namespace sweep {

namespace {

using locate::suspect;

nlohmann::json word_or_null(const std::string& w) { return w.empty() ? nlohmann::json(nullptr) : nlohmann::json(w); }

bool crossed(const suspect& s) { return s.pairs_crossing > 0; }
bool always(const suspect&) { return true; }

std::string counters_text(const suspect& s) {
  std::string out;
  for (const auto& [name, rise] : s.counters) out += fmt::format("{}{} +{}", out.empty() ? "" : ", ", name, rise);
  return out;
}

nlohmann::json counters_json(const suspect& s) {
  auto out = nlohmann::json::object();
  for (const auto& [name, rise] : s.counters) out[name] = rise;
  return out;
}

const std::vector<suspect_field> fields{
    {"pairs_bad", "bad pairs", "{} bad",
     [](const suspect& s) { return std::to_string(s.pairs_bad); }, [](const suspect& s) { return nlohmann::json(s.pairs_bad); },
     crossed},
    {"pairs_crossing", "pairs crossing", " of {} pairs crossing it",
     [](const suspect& s) { return std::to_string(s.pairs_crossing); },
     [](const suspect& s) { return nlohmann::json(s.pairs_crossing); }, crossed},
    {"counters", "counters that rose", "; counters rose: {}", counters_text, counters_json,
     [](const suspect& s) { return !s.counters.empty(); }},
    {"width", "width", "; width {}", [](const suspect& s) { return s.width; },
     [](const suspect& s) { return word_or_null(s.width); }, [](const suspect& s) { return !s.width.empty(); }},
    {"width_supported", "width its ports can run", " of {}", [](const suspect& s) { return s.width_supported; },
     [](const suspect& s) { return word_or_null(s.width_supported); },
     [](const suspect& s) { return !s.width.empty() && !s.width_supported.empty(); }},
    {"speed", "speed", "; speed {}", [](const suspect& s) { return s.speed; },
     [](const suspect& s) { return word_or_null(s.speed); }, [](const suspect& s) { return !s.speed.empty(); }},
    {"speed_supported", "speed its ports can run", " of {}", [](const suspect& s) { return s.speed_supported; },
     [](const suspect& s) { return word_or_null(s.speed_supported); },
     [](const suspect& s) { return !s.speed.empty() && !s.speed_supported.empty(); }},
    {"went_down", "went down", "; went down", [](const suspect& s) { return std::string(s.went_down ? "yes" : ""); },
     [](const suspect& s) { return nlohmann::json(s.went_down); }, [](const suspect& s) { return s.went_down; }},
    {"score", "score", "; score {}", [](const suspect& s) { return fmt::format("{:.1f}", s.score); },
     [](const suspect& s) { return nlohmann::json(s.score); }, always},
    {"reason", "reason", "", [](const suspect& s) { return s.reason; },
     [](const suspect& s) { return nlohmann::json(s.reason); }, always},
};

}  // namespace

const std::vector<suspect_field>& suspect_fields() { return fields; }

nlohmann::json suspect_json(const suspect& s) {
  auto ends = nlohmann::json::array();
  for (const auto& e : s.ends)
    ends.push_back({{"node_guid", subnet::guid_text(e.node_guid)}, {"description", e.description}, {"port", e.port}});
  nlohmann::json out{{"ends", std::move(ends)}};
  for (const auto& f : fields) out[std::string(f.key)] = f.json(s);
  return out;
}

std::string located_words(const matrix& m) {
  if (!m.located) return {};
  const auto& f = *m.located;
  const auto& found = f.found;
  std::string out = fmt::format("{} links", found.links);
  if (f.hosts > 0)
    out += fmt::format("; {} of {} {} found, {} pairs located, {} not", found.endpoints_found, f.hosts,
                       f.rails ? "rail adapters" : "hosts", found.pairs_routed, found.pairs_unrouted);
  return out + (f.documents > 1 ? "; counters compared between the two documents" : "; one document: no counters compared");
}

std::string suspects_text(const matrix& m) {
  if (!m.located) return {};
  const auto& found = m.located->found;
  std::string out = fmt::format("fabric: {}\n", located_words(m));
  if (found.suspects.empty()) return out + "suspect links: none\n";
  out += fmt::format("suspect links, worst first: {}\n", found.suspects.size());
  for (std::size_t i = 0; i < found.suspects.size(); ++i) {
    const auto& s = found.suspects[i];
    std::string line;
    for (const auto& field : fields)
      if (!field.human.empty() && field.said(s)) line += fmt::format(fmt::runtime(field.human), field.text(s));
    if (line.starts_with("; ")) line.erase(0, 2);
    out += fmt::format("{:>3}. {}: {}\n     {}\n", i + 1, locate::link_name(s), line, fabric::printable_utf8(s.reason));
  }
  return out;
}

}  // namespace sweep
