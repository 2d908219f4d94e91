// The lines the ranks and rank 0 exchange when they meet (meetings.cpp):
// a rank's measurements to rank 0, and rank 0's answer. Every line from a
// peer is read as untrusted.
#include "fabric-sweep/rank/meetings.hpp"

#include "fabric/base/text.hpp"
#include "fabric/cli/json_values.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
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

/// A word of a peer's that names a rail or an address: a string of 1 to
/// `most` printable bytes, no space among them.
bool read_word(const json& j, std::size_t most, std::string& out) {
  if (!j.is_string()) return false;
  const auto& s = j.get_ref<const std::string&>();
  if (s.empty() || s.size() > most ||
      std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f; }))
    return false;
  out = s;
  return true;
}

/// A rail index of `rails` as a peer wrote it.
std::optional<int> read_rail(const json& j, int rails) {
  if (!j.is_number_integer()) return std::nullopt;
  auto r = j.get<std::int64_t>();
  if (r < 0 || r >= rails) return std::nullopt;
  return static_cast<int>(r);
}

/// A rank's rails as it told them at the start: at most max_rails, each
/// named once.
std::optional<std::vector<rail_word>> read_rail_words(const json& j) {
  if (!j.is_array() || j.size() > max_rails) return std::nullopt;
  std::vector<rail_word> out;
  std::set<std::string> names;
  for (const auto& item : j) {
    if (!item.is_object() || !item.contains("name") || !item.contains("active") || !item["active"].is_boolean())
      return std::nullopt;
    rail_word w;
    if (!read_word(item["name"], max_rail_name_bytes, w.name) || !names.insert(w.name).second) return std::nullopt;
    w.active = item["active"].get<bool>();
    if (item.contains("address") && !item["address"].is_null() && !read_word(item["address"], max_rail_address_bytes, w.address))
      return std::nullopt;
    if (item.contains("trouble") && !item["trouble"].is_null() && !read_trouble(item["trouble"], w.trouble)) return std::nullopt;
    out.push_back(std::move(w));
  }
  return out;
}

json rail_plan_json(const rail_plan& plan) {
  json troubles = json::array(), seats = json::array();
  std::map<std::string_view, std::size_t> said_at;
  for (std::size_t r = 0; r < plan.address.size(); ++r) {
    if (plan.address[r].empty()) continue;
    json addresses = json::array(), why = json::array();
    for (std::size_t i = 0; i < plan.names.size(); ++i) {
      addresses.push_back(fabric::text_or_null(plan.address[r][i]));
      const auto& t = plan.trouble[r][i];
      if (t.empty()) {
        why.push_back(nullptr);
        continue;
      }
      auto [at, fresh] = said_at.try_emplace(t, said_at.size());
      if (fresh) troubles.push_back(fabric::printable(t).substr(0, max_trouble_bytes));
      why.push_back(at->second);
    }
    seats.push_back({r, std::move(addresses), std::move(why)});
  }
  return {{"names", plan.names}, {"troubles", std::move(troubles)}, {"seats", std::move(seats)}};
}

/// Rank 0's plan as a rank reads it: at most max_rails names, each once;
/// each seat a rank of n in order, with an address or nothing and a
/// trouble or nothing for every rail.
std::optional<rail_plan> read_rail_plan(const json& j, int n) {
  if (!j.is_object() || !j.contains("names") || !j["names"].is_array() || j["names"].size() > max_rails ||
      !j.contains("troubles") || !j["troubles"].is_array() || !j.contains("seats") || !j["seats"].is_array() ||
      j["seats"].size() > static_cast<std::size_t>(n))
    return std::nullopt;
  rail_plan plan;
  std::set<std::string> names;
  for (const auto& item : j["names"])
    if (!read_word(item, max_rail_name_bytes, plan.names.emplace_back()) || !names.insert(plan.names.back()).second)
      return std::nullopt;
  auto rails = plan.names.size();
  if (j["troubles"].size() > j["seats"].size() * rails) return std::nullopt;
  std::vector<std::string> troubles;
  for (const auto& item : j["troubles"])
    if (!read_trouble(item, troubles.emplace_back())) return std::nullopt;
  plan.address.resize(static_cast<std::size_t>(n));
  plan.trouble.resize(static_cast<std::size_t>(n));
  int last = -1;
  for (const auto& seat : j["seats"]) {
    if (!seat.is_array() || seat.size() != 3 || !seat[0].is_number_integer() || !seat[1].is_array() ||
        seat[1].size() != rails || !seat[2].is_array() || seat[2].size() != rails)
      return std::nullopt;
    auto rank = seat[0].get<std::int64_t>();
    if (rank <= last || rank >= n) return std::nullopt;
    last = static_cast<int>(rank);
    auto& address = plan.address[static_cast<std::size_t>(rank)];
    auto& trouble = plan.trouble[static_cast<std::size_t>(rank)];
    address.assign(rails, {});
    trouble.assign(rails, {});
    for (std::size_t i = 0; i < rails; ++i) {
      if (!seat[1][i].is_null() && !read_word(seat[1][i], max_rail_address_bytes, address[i])) return std::nullopt;
      if (seat[2][i].is_null()) continue;
      if (!seat[2][i].is_number_unsigned() || seat[2][i].get<std::uint64_t>() >= troubles.size()) return std::nullopt;
      trouble[i] = troubles[seat[2][i].get<std::size_t>()];
    }
  }
  return plan;
}

}  // namespace

std::size_t max_answer_bytes(int n) {
  return (std::size_t{1} << 20) + static_cast<std::size_t>(std::max(n, 0)) * max_rails * (max_rail_address_bytes + 16);
}

std::string rank_line(int sweep, const rank_word& word) {
  json figures = json::array();
  for (const auto& m : word.figures) figures.push_back({m.pair.first, m.pair.second, m.figure});
  for (const auto& f : word.rail_figures)
    figures.push_back({f.m.pair.first, f.m.pair.second, f.m.figure, f.rails.server, f.rails.client});
  json line{{"rank", word.rank}, {"sweep", sweep}, {"figures", std::move(figures)}};
  if (!word.trouble.empty()) line["trouble"] = fabric::printable(word.trouble).substr(0, max_trouble_bytes);
  if (word.rate_gbps > 0) line["rate_gbps"] = word.rate_gbps;
  if (word.rails) {
    json rails = json::array();
    for (const auto& r : *word.rails)
      rails.push_back({{"name", r.name},
                       {"address", fabric::text_or_null(r.address)},
                       {"trouble", r.trouble.empty() ? json(nullptr) : json(fabric::printable(r.trouble).substr(0, max_trouble_bytes))},
                       {"active", r.active}});
    line["rails"] = std::move(rails);
  }
  if (!word.rail_rates.empty()) line["rail_rates"] = word.rail_rates;
  return line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<rank_word> read_rank_line(std::string_view line, int n, int sweep, int rails) {
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
    // On rails, each figure names its meeting's rails.
    if (!pair || item.size() != (rails > 0 ? 5u : 3u) || !item[2].is_number()) return std::nullopt;
    double figure = item[2].get<double>();
    // A client measures only its own pairs, and a figure is finite and positive.
    if (pair->second != rank || !std::isfinite(figure) || figure < 0) return std::nullopt;
    if (rails == 0) {
      out.figures.push_back({*pair, figure});
      continue;
    }
    auto server = read_rail(item[3], rails), client = read_rail(item[4], rails);
    if (!server || !client) return std::nullopt;
    out.rail_figures.push_back({{*pair, figure}, {*server, *client}});
  }
  // Each meeting once: a pair of hosts meets R x R times at most.
  if (out.rail_figures.size() > static_cast<std::size_t>(n) * static_cast<std::size_t>(rails) * static_cast<std::size_t>(rails))
    return std::nullopt;
  if (j.contains("rails")) {
    out.rails = read_rail_words(j["rails"]);
    if (!out.rails) return std::nullopt;
  }
  if (j.contains("rail_rates")) {
    const auto& r = j["rail_rates"];
    if (!r.is_array() || r.size() > max_rails) return std::nullopt;
    for (const auto& rate : r) {
      if (!rate.is_number() || (rate.get<double>() != 0 && !expect_gbps_range.holds(rate.get<double>()))) return std::nullopt;
      out.rail_rates.push_back(rate.get<double>());
    }
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
  json out{{"retest", std::move(pairs)}, {"median_p50_us", a.fleet.median},       {"mad_us", a.fleet.mad},
           {"samples", a.fleet.samples},   {"bar", fabric::value_or_null(a.bar)}, {"run", a.run},
           {"present", a.present},         {"unable", std::move(unable)},           {"troubles", std::move(troubles)}};
  if (!a.retest_rails.empty()) {
    json again = json::array();
    for (const auto& r : a.retest_rails) again.push_back({r.pair.first, r.pair.second, r.rails.server, r.rails.client});
    out["retest_rails"] = std::move(again);
  }
  if (a.rails) out["rails"] = rail_plan_json(*a.rails);
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::optional<agreement> read_agreement(std::string_view line, int n, int rails) {
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
  if (j.contains("retest_rails")) {
    const auto& again = j["retest_rails"];
    auto pairs = static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1) / 2;
    if (rails <= 0 || !again.is_array() ||
        again.size() > pairs * static_cast<std::size_t>(rails) * static_cast<std::size_t>(rails))
      return std::nullopt;
    for (const auto& item : again) {
      auto pair = read_pair(item, n);
      if (!pair || item.size() != 4) return std::nullopt;
      auto server = read_rail(item[2], rails), client = read_rail(item[3], rails);
      if (!server || !client) return std::nullopt;
      a.retest_rails.push_back({*pair, {*server, *client}});
    }
  }
  if (j.contains("rails")) {
    a.rails = read_rail_plan(j["rails"], n);
    if (!a.rails) return std::nullopt;
  }
  return a;
}

}  // namespace sweep
