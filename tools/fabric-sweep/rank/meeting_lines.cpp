// The lines the ranks and rank 0 exchange when they meet (meetings.cpp):
// a rank's measurements to rank 0, and rank 0's answer. Every line from a
// peer is read as untrusted.
#include "fabric-sweep/rank/meetings.hpp"

#include "fabric/base/text.hpp"
#include "fabric/cli/json_values.hpp"

#include <cmath>
#include <map>
#include <string_view>

namespace sweep {

using nlohmann::json;

namespace {

/// Longest run identity a line may carry.
constexpr std::size_t max_run_bytes = 128;

/// A pair of ranks as a peer wrote it: [server, client], 0 <= server < client < n.
std::optional<rank_pair> read_pair(const json& j, int n) {
  if (!j.is_array() || j.size() < 2 || !j[0].is_number_integer() || !j[1].is_number_integer()) return std::nullopt;
  auto s = j[0].get<std::int64_t>(), c = j[1].get<std::int64_t>();
  if (s < 0 || s >= c || c >= n) return std::nullopt;
  return rank_pair{static_cast<int>(s), static_cast<int>(c)};
}

/// A rank's trouble as a peer wrote it: a string of 1 to max_trouble_bytes,
/// kept printable.
bool read_trouble(const json& j, std::string& out) {
  if (!j.is_string() || j.get_ref<const std::string&>().empty() || j.get_ref<const std::string&>().size() > max_trouble_bytes)
    return false;
  out = fabric::printable(j.get_ref<const std::string&>());
  return true;
}

}  // namespace

std::string rank_line(int sweep, const rank_word& word) {
  json figures = json::array();
  for (const auto& m : word.figures) figures.push_back({m.pair.first, m.pair.second, m.figure});
  json line{{"rank", word.rank}, {"sweep", sweep}, {"figures", std::move(figures)}};
  if (!word.trouble.empty()) line["trouble"] = fabric::printable(word.trouble).substr(0, max_trouble_bytes);
  if (word.rate_gbps > 0) line["rate_gbps"] = word.rate_gbps;
  return line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<rank_word> read_rank_line(std::string_view line, int n, int sweep) {
  auto j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("rank") || !j["rank"].is_number_integer() ||
      !j.contains("figures") || !j["figures"].is_array())
    return std::nullopt;
  // A rank still in an earlier sweep of --repeat speaks of stale times.
  if (!j.contains("sweep") || !j["sweep"].is_number_integer() || j["sweep"].get<std::int64_t>() != sweep) return std::nullopt;
  auto rank = j["rank"].get<std::int64_t>();
  if (rank < 0 || rank >= n) return std::nullopt;
  rank_word out;
  out.rank = static_cast<int>(rank);
  for (const auto& item : j["figures"]) {
    auto pair = read_pair(item, n);
    if (!pair || item.size() != 3 || !item[2].is_number()) return std::nullopt;
    double figure = item[2].get<double>();
    // A client measures only its own pairs, and a figure is finite and positive.
    if (pair->second != rank || !std::isfinite(figure) || figure < 0) return std::nullopt;
    out.figures.push_back({*pair, figure});
  }
  if (j.contains("trouble")) {
    if (!read_trouble(j["trouble"], out.trouble)) return std::nullopt;
  }
  if (j.contains("rate_gbps")) {
    const auto& r = j["rate_gbps"];
    if (!r.is_number() || !expect_gbps_range.holds(r.get<double>())) return std::nullopt;
    out.rate_gbps = r.get<double>();
  }
  return out;
}

std::string agreement_line(const agreement& a) {
  json pairs = json::array();
  for (auto [s, c] : a.retest) pairs.push_back({s, c});
  // Each trouble once, the ranks by its place: a fleet whose hosts share
  // one trouble (every port down) keeps the line short.
  json troubles = json::array(), unable = json::array();
  std::map<std::string_view, std::size_t> said_at;
  for (const auto& [rank, why] : a.unable) {
    auto [at, fresh] = said_at.try_emplace(why, said_at.size());
    if (fresh) troubles.push_back(why);
    unable.push_back({rank, at->second});
  }
  return json{{"retest", std::move(pairs)}, {"median_p50_us", a.fleet.median},       {"mad_us", a.fleet.mad},
              {"samples", a.fleet.samples},   {"bar", fabric::value_or_null(a.bar)}, {"run", a.run},
              {"present", a.present},         {"unable", std::move(unable)},           {"troubles", std::move(troubles)}}
             .dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n";
}

std::optional<agreement> read_agreement(std::string_view line, int n) {
  auto j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("retest") || !j["retest"].is_array()) return std::nullopt;
  agreement a;
  for (const auto& item : j["retest"]) {
    auto pair = read_pair(item, n);
    if (!pair || item.size() != 2) return std::nullopt;
    a.retest.push_back(*pair);
  }
  // Every pair is met once per round: more than n * (n - 1) / 2 is a lie.
  if (a.retest.size() > static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1) / 2) return std::nullopt;
  auto number = [&](const char* key) {
    return j.contains(key) && j[key].is_number() && std::isfinite(j[key].get<double>()) ? j[key].get<double>() : 0.0;
  };
  a.fleet.median = number("median_p50_us");
  a.fleet.mad = number("mad_us");
  a.fleet.samples = j.contains("samples") && j["samples"].is_number_unsigned() ? j["samples"].get<std::size_t>() : 0;
  if (j.contains("bar") && j["bar"].is_number() && std::isfinite(j["bar"].get<double>())) a.bar = j["bar"].get<double>();
  if (j.contains("run")) {
    if (!j["run"].is_string() || j["run"].get_ref<const std::string&>().size() > max_run_bytes) return std::nullopt;
    a.run = j["run"].get<std::string>();
  }
  if (j.contains("present")) {
    // Ranks in order, each once, rank 0 among them.
    if (!j["present"].is_array() || j["present"].size() > static_cast<std::size_t>(n)) return std::nullopt;
    for (const auto& r : j["present"]) {
      if (!r.is_number_integer()) return std::nullopt;
      auto rank = r.get<std::int64_t>();
      if (rank < 0 || rank >= n || (!a.present.empty() && rank <= a.present.back())) return std::nullopt;
      a.present.push_back(static_cast<int>(rank));
    }
    if (!a.present.empty() && a.present.front() != 0) return std::nullopt;
  }
  if (j.contains("unable")) {
    // Ranks in order, each once, each with the place of what keeps it
    // from RDMA among the troubles.
    std::vector<std::string> troubles;
    if (!j["unable"].is_array() || j["unable"].size() > static_cast<std::size_t>(n) || !j.contains("troubles") ||
        !j["troubles"].is_array() || j["troubles"].size() > j["unable"].size())
      return std::nullopt;
    for (const auto& item : j["troubles"])
      if (!read_trouble(item, troubles.emplace_back())) return std::nullopt;
    for (const auto& item : j["unable"]) {
      if (!item.is_array() || item.size() != 2 || !item[0].is_number_integer() || !item[1].is_number_unsigned())
        return std::nullopt;
      auto rank = item[0].get<std::int64_t>();
      auto which = item[1].get<std::uint64_t>();
      if (rank < 0 || rank >= n || (!a.unable.empty() && rank <= a.unable.back().first) || which >= troubles.size())
        return std::nullopt;
      a.unable.emplace_back(static_cast<int>(rank), troubles[which]);
    }
  }
  return a;
}

}  // namespace sweep
