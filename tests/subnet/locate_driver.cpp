// fabric_locate BEFORE [AFTER] PAIRS: the report's locating, run on its own
// until the report joins it to the sweep's lines. PAIRS has one pair a line,
// "HOSTA HOSTB P50_US" or "HOSTA HOSTB failed"; a pair is slow as the report
// judges latency checks by default: its median above 2.5 times the fleet's.
// Prints the suspects and notes as one JSON object.
#include "fabric-sweep/discover/document.hpp"
#include "fabric-sweep/report/locate/locate.hpp"

#include "fabric/base/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

int main(int argc, char** argv) try {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: fabric_locate BEFORE [AFTER] PAIRS\n";
    return 2;
  }
  auto before = sweep::subnet::read_document_file(argv[1]);
  std::optional<sweep::subnet::reading> after;
  if (argc == 4) after = sweep::subnet::read_document_file(argv[2]);
  std::ifstream in(argv[argc - 1]);
  std::vector<sweep::locate::endpoint_hint> hosts;
  std::map<std::string, std::uint32_t> host_index;
  auto host = [&](const std::string& name) {
    auto [it, fresh] = host_index.emplace(name, static_cast<std::uint32_t>(hosts.size()));
    if (fresh) hosts.push_back({name, {}, {}});
    return it->second;
  };
  struct line {
    std::uint32_t a, b;
    std::optional<double> p50;
  };
  std::vector<line> lines;
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream words(text);
    std::string a, b, figure;
    if (!(words >> a >> b >> figure)) continue;
    lines.push_back({host(a), host(b), figure == "failed" ? std::nullopt : std::optional(std::stod(figure))});
  }
  std::vector<double> figures;
  for (const auto& l : lines)
    if (l.p50) figures.push_back(*l.p50);
  std::sort(figures.begin(), figures.end());
  double median = figures.empty() ? 0 : figures[figures.size() / 2];
  std::vector<sweep::locate::judged_pair> pairs;
  for (const auto& l : lines) pairs.push_back({l.a, l.b, !l.p50 || *l.p50 > 2.5 * median});
  auto loc = sweep::locate::locate(before.model, after ? &after->model : nullptr, hosts, pairs);
  nlohmann::json out{{"notes", before.notes}, {"endpoints_found", loc.endpoints_found},
                     {"pairs_routed", loc.pairs_routed}, {"pairs_unrouted", loc.pairs_unrouted},
                     {"pairs_bad", std::count_if(pairs.begin(), pairs.end(), [](const auto& p) { return p.bad; })}};
  for (const auto& n : loc.notes) out["notes"].push_back(n);
  out["suspects"] = nlohmann::json::array();
  for (const auto& s : loc.suspects) {
    nlohmann::json ends = nlohmann::json::array();
    for (const auto& e : s.ends)
      ends.push_back({{"node_guid", sweep::subnet::guid_text(e.node_guid)}, {"description", e.description}, {"port", e.port}});
    nlohmann::json counters = nlohmann::json::object();
    for (const auto& [name, rise] : s.counters) counters[name] = rise;
    out["suspects"].push_back({{"ends", ends},
                               {"pairs_crossing", s.pairs_crossing},
                               {"pairs_bad", s.pairs_bad},
                               {"counters", counters},
                               {"width", s.width},
                               {"width_supported", s.width_supported},
                               {"speed", s.speed},
                               {"speed_supported", s.speed_supported},
                               {"went_down", s.went_down},
                               {"score", s.score},
                               {"reason", s.reason}});
  }
  std::cout << out.dump(1) << '\n';
  return 0;
} catch (const fabric::error& e) {
  std::cerr << "fabric_locate: error: " << e.what() << '\n';
  return static_cast<int>(e.code());
}
