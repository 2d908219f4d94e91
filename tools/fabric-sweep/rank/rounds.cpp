// Who meets whom in which round, and on which port: every pair (the circle
// method), ClusterKit's quick round, a list of pairs packed into rounds
// (the outliers' re-tests, --pairs without round numbers), or the rounds
// of a --pairs file.
#include "fabric-sweep/rank/rounds.hpp"

#include "fabric/base/big_endian.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/cli/console.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <limits>
#include <map>
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

/// The round (from 0) in which the circle method over `m` hosts (m even)
/// meets x and y (x < y): rank 0 stays while the others turn, so 0 meets
/// y in round y mod (m - 1), and x and y meet where x + y = 2r modulo
/// m - 1, r = (x + y) m/2 (m/2 being the inverse of 2 modulo m - 1).
std::uint64_t circle_round(std::uint64_t x, std::uint64_t y, std::uint64_t m) {
  if (x == 0) return y % (m - 1);
  return (x + y) * (m / 2) % (m - 1);
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
  for (auto& p : pairs)
    if (p.first > p.second) std::swap(p.first, p.second);
  std::erase_if(pairs, [](const rank_pair& p) { return p.first < 0 || p.first == p.second; });
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  if (pairs.empty()) return {};
  // The hosts the pairs name, numbered from 0 in rank order.
  constexpr auto none = std::numeric_limits<std::uint32_t>::max();
  int most = 0;
  for (auto [s, c] : pairs) most = std::max(most, c);
  std::vector<std::uint32_t> index(static_cast<std::size_t>(most) + 1, none);
  for (auto [s, c] : pairs) index[static_cast<std::size_t>(s)] = index[static_cast<std::size_t>(c)] = 0;
  std::uint32_t m = 0;
  for (auto& i : index)
    if (i != none) i = m++;
  std::uint64_t even = m + m % 2;
  auto of = [&](int rank) { return index[static_cast<std::size_t>(rank)]; };
  // The pairs in the order of their rounds by the circle method over those
  // hosts (a counting sort): then the first round where both hosts of a
  // pair are free is never later than its circle round, so that every pair
  // of m hosts takes the circle method's m - 1 rounds, and fewer pairs no
  // more (a first fit in rank order takes up to twice as many).
  std::vector<std::size_t> start(even, 0);
  for (auto [s, c] : pairs) ++start[circle_round(of(s), of(c), even) + 1];
  for (std::size_t r = 1; r < start.size(); ++r) start[r] += start[r - 1];
  std::vector<rank_pair> ordered(pairs.size());
  for (auto p : pairs) ordered[start[circle_round(of(p.first), of(p.second), even)]++] = p;
  std::vector<rank_pair>().swap(pairs);
  std::vector<std::size_t>().swap(start);
  // Each host's busy rounds, a bit each: a pair's first free round for
  // both is the first zero bit of the two hosts' words or'ed.
  auto words = static_cast<std::size_t>((even - 1 + 63) / 64);
  std::vector<std::uint64_t> busy(std::size_t{m} * words, 0);
  std::vector<std::vector<pairing>> out;
  for (std::size_t k = 0; k < ordered.size(); ++k) {
    if ((k & 0xffff) == 0) fabric::throw_if_interrupted();
    auto [s, c] = ordered[k];
    auto* bs = &busy[of(s) * words];
    auto* bc = &busy[of(c) * words];
    std::size_t w = 0;
    while (~(bs[w] | bc[w]) == 0) ++w;
    auto bit = std::countr_zero(~(bs[w] | bc[w]));
    bs[w] |= std::uint64_t{1} << bit;
    bc[w] |= std::uint64_t{1} << bit;
    auto r = w * 64 + static_cast<std::size_t>(bit);
    if (out.size() <= r) out.resize(r + 1);
    out[r].push_back({s, c, 0});
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

std::vector<std::byte> pair_key(int step, const pairing& p) {
  std::vector<std::byte> key(16);
  auto* b = reinterpret_cast<std::uint8_t*>(key.data());
  std::copy_n("FSWP", 4, b);
  fabric::big_endian::store_be32(b + 4, static_cast<std::uint32_t>(step));
  fabric::big_endian::store_be32(b + 8, static_cast<std::uint32_t>(p.server));
  fabric::big_endian::store_be32(b + 12, static_cast<std::uint32_t>(p.client));
  return key;
}

int port_cycle(int base, int n) { return (65536 - base) / std::max(1, n / 2); }

int pair_port(int base, int n, int round, const pairing& p) {
  return base + (round % std::max(1, port_cycle(base, n))) * std::max(1, n / 2) + p.slot;
}

}  // namespace sweep
