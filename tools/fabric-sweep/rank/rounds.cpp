// Who meets whom in which round, and on which port: every pair (the circle
// method), ClusterKit's quick round, a list of pairs packed into rounds
// (the outliers' re-tests, --pairs without round numbers), or the rounds
// of a --pairs file.
#include "fabric-sweep/rank/rounds.hpp"

#include "fabric/base/big_endian.hpp"
#include "fabric/base/text.hpp"
#include "fabric/cli/console.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace sweep {

namespace {

[[noreturn]] void bad_line(std::string_view file, std::size_t line, const std::string& why) {
  fabric::cli::usage_error(fmt::format("--pairs {}:{}: {}", fabric::printable(file), line, why));
}

/// Numbers each round's pairs in server order: a pair's slot picks its port.
std::vector<std::vector<pairing>> numbered(std::vector<std::vector<pairing>> rounds) {
  for (auto& round : rounds) {
    std::sort(round.begin(), round.end(), [](const pairing& x, const pairing& y) { return x.server < y.server; });
    for (std::size_t s = 0; s < round.size(); ++s) round[s].slot = static_cast<int>(s);
  }
  return rounds;
}

}  // namespace

std::vector<std::vector<pairing>> rounds(int n) {
  std::vector<std::vector<pairing>> out;
  if (n < 2) return out;
  // The circle method: rank 0 stays, the others turn one place a round;
  // with n odd, a phantom rank n gives its partner the bye.
  int m = n % 2 == 0 ? n : n + 1;
  std::vector<int> ring(static_cast<std::size_t>(m));
  for (int r = 0; r < m - 1; ++r) {
    ring[0] = 0;
    for (int k = 1; k < m; ++k) ring[static_cast<std::size_t>(k)] = (k - 1 + r) % (m - 1) + 1;
    std::vector<pairing> round;
    for (int i = 0; i < m / 2; ++i) {
      int a = ring[static_cast<std::size_t>(i)], b = ring[static_cast<std::size_t>(m - 1 - i)];
      if (a >= n || b >= n) continue;  // the bye
      round.push_back({std::min(a, b), std::max(a, b), 0});
    }
    out.push_back(std::move(round));
  }
  return numbered(std::move(out));
}

std::vector<std::vector<pairing>> quick_round(int n) {
  std::vector<pairing> round;
  for (int i = 0; i < n / 2; ++i) round.push_back({i, i + n / 2, 0});
  return numbered({std::move(round)});
}

std::vector<std::vector<pairing>> pack_rounds(std::vector<rank_pair> pairs) {
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<std::vector<pairing>> out;
  std::vector<std::set<int>> busy;
  // Each pair goes to the first round where both its hosts are free.
  for (auto [server, client] : pairs) {
    std::size_t r = 0;
    while (r < out.size() && (busy[r].contains(server) || busy[r].contains(client))) ++r;
    if (r == out.size()) {
      out.emplace_back();
      busy.emplace_back();
    }
    out[r].push_back({server, client, 0});
    busy[r].insert({server, client});
  }
  return numbered(std::move(out));
}

std::vector<std::vector<pairing>> rounds_from_file(std::string_view text, std::string_view name,
                                                   const std::vector<std::string>& hosts) {
  std::map<long, std::vector<pairing>> numbered_rounds;
  std::vector<rank_pair> unnumbered;
  std::map<rank_pair, std::size_t> paired;                   // pair -> the line that named it
  std::map<std::pair<long, int>, std::size_t> busy;          // (round, rank) -> the line
  std::optional<bool> with_rounds;                           // as the first pair line says
  std::istringstream in{std::string(text)};
  std::string line;
  for (std::size_t at = 1; std::getline(in, line); ++at) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty() || w.front().front() == '#') continue;
    if (w.size() != 2 && w.size() != 3) bad_line(name, at, "expected 'HOST HOST' or 'ROUND HOST HOST'");
    long round = 0;
    if (w.size() == 3) {
      auto number = fabric::whole_number<long>(w[0]);
      if (!number || *number < 1 || *number > 1'000'000)
        bad_line(name, at, fmt::format("'{}' is not a round number (1 to 1000000)", fabric::printable(w[0])));
      round = *number;
    }
    if (!with_rounds) with_rounds = w.size() == 3;
    if (*with_rounds != (w.size() == 3))
      bad_line(name, at, *with_rounds ? "no round number, where the first pair line has one" : "a round number, where the first pair line has none");
    int ranks[2];
    for (int k = 0; k < 2; ++k) {
      const auto& h = w[w.size() - 2 + static_cast<std::size_t>(k)];
      auto r = host_index(hosts, h);
      if (!r) bad_line(name, at, fmt::format("{} is not one of the sweep's hosts", fabric::printable(h)));
      ranks[k] = *r;
    }
    if (ranks[0] == ranks[1]) bad_line(name, at, fmt::format("{} is paired with itself", fabric::printable(hosts[static_cast<std::size_t>(ranks[0])])));
    rank_pair pair{std::min(ranks[0], ranks[1]), std::max(ranks[0], ranks[1])};
    if (auto [it, fresh] = paired.emplace(pair, at); !fresh)
      bad_line(name, at, fmt::format("{} and {} are paired on line {} already", fabric::printable(hosts[static_cast<std::size_t>(pair.first)]),
                          fabric::printable(hosts[static_cast<std::size_t>(pair.second)]), it->second));
    if (!*with_rounds) {
      unnumbered.push_back(pair);
      continue;
    }
    for (int r : {pair.first, pair.second})
      if (auto [it, fresh] = busy.emplace(std::pair{round, r}, at); !fresh)
        bad_line(name, at, fmt::format("{} is in round {} already (line {})", fabric::printable(hosts[static_cast<std::size_t>(r)]), round,
                            it->second));
    numbered_rounds[round].push_back({pair.first, pair.second, 0});
  }
  if (paired.empty()) fabric::cli::usage_error(fmt::format("--pairs {}: no pairs in it", fabric::printable(name)));
  if (!*with_rounds) return pack_rounds(std::move(unnumbered));
  std::vector<std::vector<pairing>> out;
  for (auto& [round, pairs] : numbered_rounds) out.push_back(std::move(pairs));
  return numbered(std::move(out));
}

std::vector<std::vector<pairing>> schedule_of(const run_options& r, const place& where) {
  int n = static_cast<int>(where.hosts.size());
  if (r.quick) return quick_round(n);
  if (r.pairs_file.empty()) return rounds(n);
  // Every pair of 2,000 hosts, one a line, is some 60 MB.
  constexpr std::size_t max_bytes = std::size_t{256} << 20;
  std::ifstream in(r.pairs_file, std::ios::binary);
  std::string text;
  char chunk[65536];
  while (in && text.size() <= max_bytes) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
  }
  if (!in.eof()) {
    if (text.size() > max_bytes)
      fabric::cli::usage_error(fmt::format("--pairs {}: larger than {} MiB", fabric::printable(r.pairs_file), max_bytes >> 20));
    fabric::cli::usage_error(fmt::format("--pairs {}: cannot read it", fabric::printable(r.pairs_file)));
  }
  return rounds_from_file(text, r.pairs_file, where.hosts);
}

namespace {

std::vector<std::byte> key_of(const char* mark, int step, const pairing& p, std::size_t bytes) {
  std::vector<std::byte> key(bytes);
  auto* b = reinterpret_cast<std::uint8_t*>(key.data());
  std::copy_n(mark, 4, b);
  fabric::big_endian::store_be32(b + 4, static_cast<std::uint32_t>(step));
  fabric::big_endian::store_be32(b + 8, static_cast<std::uint32_t>(p.server));
  fabric::big_endian::store_be32(b + 12, static_cast<std::uint32_t>(p.client));
  return key;
}

}  // namespace

std::vector<std::byte> pair_key(int step, const pairing& p) { return key_of("FSWP", step, p, 16); }

std::vector<std::byte> pair_key(int step, const pairing& p, const rail_meeting& rails) {
  auto key = key_of("FSWR", step, p, 20);
  auto* b = reinterpret_cast<std::uint8_t*>(key.data());
  fabric::big_endian::store_be16(b + 16, static_cast<std::uint16_t>(rails.server));
  fabric::big_endian::store_be16(b + 18, static_cast<std::uint16_t>(rails.client));
  return key;
}

std::vector<std::vector<rail_meeting>> rail_meetings(int rails, bool cross) {
  std::vector<std::vector<rail_meeting>> out;
  for (int k = 0; k < (cross ? rails : std::min(rails, 1)); ++k) {
    auto& group = out.emplace_back();
    for (int i = 0; i < rails; ++i) group.push_back({i, (i + k) % rails});
  }
  return out;
}

std::vector<std::vector<rail_meeting>> meeting_groups(std::vector<rail_meeting> meetings) {
  std::sort(meetings.begin(), meetings.end());
  meetings.erase(std::unique(meetings.begin(), meetings.end()), meetings.end());
  std::vector<std::vector<rail_meeting>> out;
  for (const auto& m : meetings) {
    auto free = [&m](const std::vector<rail_meeting>& group) {
      return std::none_of(group.begin(), group.end(),
                          [&m](const rail_meeting& g) { return g.server == m.server || g.client == m.client; });
    };
    auto at = std::find_if(out.begin(), out.end(), free);
    if (at == out.end()) at = out.emplace(out.end());
    at->push_back(m);
  }
  return out;
}

int meeting_index(const rail_meeting& m, int rails, bool cross) { return cross ? m.server * rails + m.client : m.server; }

std::vector<rail_meeting> intra_meetings(int rails) {
  std::vector<rail_meeting> out;
  for (int i = 0; i < rails; ++i)
    for (int j = i + 1; j < rails; ++j) out.push_back({j, i});
  return out;
}

port_plan port_plan::of(int base, int n, int rails, bool cross, bool intra) {
  port_plan p;
  p.base = base;
  p.pairs = std::max(1, n / 2);
  p.meetings = rails <= 0 ? 1 : cross ? rails * rails : rails;
  p.intra = intra ? rails * (rails - 1) / 2 : 0;
  return p;
}

int port_plan::width() const { return std::max(pairs * meetings, intra); }

int port_plan::cycle() const { return (65536 - base) / std::max(1, width()); }

int port_plan::port(int step, int slot, int meeting) const {
  return base + (step % std::max(1, cycle())) * width() + slot * meetings + meeting;
}

int port_cycle(int base, int n) { return port_plan::of(base, n).cycle(); }

int pair_port(int base, int n, int round, const pairing& p) { return port_plan::of(base, n).port(round, p.slot); }

}  // namespace sweep
