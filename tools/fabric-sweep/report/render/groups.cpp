// The page's groups from Slurm's topology.conf: each leaf switch's hosts.
#include "fabric-sweep/report/render/render.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/cli/hostlist.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace sweep {

namespace {

/// The value of `key=` among a line's words, if there.
std::optional<std::string_view> value_of(std::string_view line, std::string_view key) {
  for (std::size_t at = 0; at < line.size();) {
    auto start = line.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    auto end = line.find_first_of(" \t", start);
    auto word = line.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    auto eq = word.find('=');
    if (eq != std::string_view::npos && word.substr(0, eq).size() == key.size() &&
        std::equal(key.begin(), key.end(), word.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); }))
      return word.substr(eq + 1);
    if (end == std::string_view::npos) break;
    at = end;
  }
  return std::nullopt;
}

}  // namespace

std::vector<host_group> groups_of_topology(std::string_view conf, const std::vector<std::string>& hosts) {
  std::unordered_map<std::string_view, std::uint32_t> index;
  for (std::uint32_t i = 0; i < hosts.size(); ++i) index.emplace(hosts[i], i);
  std::vector<bool> placed(hosts.size(), false);
  std::vector<host_group> out;
  std::size_t number = 0;
  for (std::size_t at = 0; at < conf.size();) {
    auto nl = conf.find('\n', at);
    auto line = conf.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? conf.size() : nl + 1;
    ++number;
    line = line.substr(0, line.find('#'));
    auto name = value_of(line, "SwitchName");
    auto nodes = value_of(line, "Nodes");
    if (!name || !nodes) continue;  // a spine (Switches=), or not a switch
    std::vector<std::string> names;
    try {
      names = fabric::expand_hostlist(*nodes);
    } catch (const fabric::error& e) {
      throw fabric::error(fabric::exit_code::usage, fmt::format("--topology line {}: Nodes={}: {}", number,
                                                                fabric::printable(*nodes), e.what()));
    }
    host_group g{std::string(*name), {}};
    for (const auto& h : names)
      if (auto it = index.find(h); it != index.end() && !placed[it->second]) {
        placed[it->second] = true;
        g.hosts.push_back(it->second);
      }
    if (!g.hosts.empty()) out.push_back(std::move(g));
  }
  host_group rest{"(no switch)", {}};
  for (std::uint32_t i = 0; i < hosts.size(); ++i)
    if (!placed[i]) rest.hosts.push_back(i);
  if (!rest.hosts.empty()) out.push_back(std::move(rest));
  return out;
}

}  // namespace sweep
