// Who meets whom in which round, and on which port: every pair (the circle
// method), ClusterKit's quick round, a list of pairs packed into rounds
// (the outliers' re-tests, --pairs without round numbers), or the rounds
// of a --pairs file.
#include "fabric-sweep/rank/rounds.hpp"
#include "fabric-sweep/verdict.hpp"

#include "fabric/base/big_endian.hpp"
#include "fabric/base/socket.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/cli/console.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

namespace sweep {

namespace {

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
  std::vector<std::vector<pairing>> out;
  if (n < 2) return out;
  auto& round = out.emplace_back();
  for (int i = 0; i < n / 2; ++i) round.push_back({i, i + n / 2, 0});
  // With n odd the last host has no peer in the round: a second round of
  // it alone, with the lower half's last host, so that every host meets
  // one peer and none two at once.
  if (n % 2 == 1) out.push_back({{n / 2 - 1, n - 1, 0}});
  return numbered(std::move(out));
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

namespace {

[[noreturn]] void bad_line(std::string_view file, std::size_t line, const std::string& why) {
  fabric::cli::usage_error(fmt::format("--pairs {}:{}: {}", fabric::printable(file), line, why));
}

/// A --pairs file read as it comes, a line at a time: its memory is for
/// the pairs, never for the text (a word longer than any host's name is
/// an error at once, and so is a fourth word on a line).
class pairs_reader {
public:
  pairs_reader(std::string_view name, const std::vector<std::string>& hosts) : name_(name), hosts_(hosts) {
    auto n = hosts.size();
    paired_.resize(((n < 2 ? 0 : n * (n - 1) / 2) + 63) / 64);
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      by_name_.emplace(hosts[i], static_cast<int>(i));
      by_short_.emplace(short_name(hosts[i]), static_cast<int>(i));
      most_ = std::max(most_, hosts[i].size());
    }
  }

  void feed(std::string_view bytes) {
    while (!bytes.empty()) {
      // 200 MB of blank lines must still hear Ctrl-C.
      fabric::throw_if_interrupted();
      auto piece = bytes.substr(0, std::size_t{1} << 16);
      bytes.remove_prefix(piece.size());
      for (std::size_t i = 0; i < piece.size(); ++i) {
        char c = piece[i];
        if (c == '\n') {
          end_line();
        } else if (in_comment_) {
          auto nl = piece.find('\n', i);
          auto end = nl == std::string_view::npos ? piece.size() : nl;
          if (keeping_) keep(piece.substr(i, end - i));
          i = end - 1;
        } else if (c == '#') {
          in_comment_ = true;
          in_word_ = false;
          // A comment line before the first pair is the header, where a
          // first run's "#bar" line is: kept, each line bounded.
          keeping_ = count_ == 0 && !with_rounds_ && header_.size() < most_header_lines;
          if (keeping_) header_.emplace_back("#");
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
          in_word_ = false;
        } else {
          if (!in_word_) {
            if (count_ == words_.size()) bad_line(name_, line_, "expected 'HOST HOST' or 'ROUND HOST HOST'");
            words_[count_++].clear();
            in_word_ = true;
          }
          auto& w = words_[count_ - 1];
          if (w.size() == most_)
            bad_line(name_, line_, fmt::format("a word longer than {} bytes, longer than any host's name", most_));
          w += c;
        }
      }
    }
  }

  /// The bar of the run whose outliers the file holds, for check `c`: its
  /// "#bar" line among the comments before the first pair (bar_of_line).
  [[nodiscard]] std::optional<double> bar(check c) const {
    for (const auto& line : header_)
      if (auto b = bar_of_line(line, c)) return b;
    return std::nullopt;
  }

  std::vector<std::vector<pairing>> finish() {
    if (count_ > 0) end_line();
    if (!with_rounds_) fabric::cli::usage_error(fmt::format("--pairs {}: no pairs in it", fabric::printable(name_)));
    if (!*with_rounds_) {
      std::vector<rank_pair> list;
      list.reserve(unnumbered_.size());
      for (const auto& p : unnumbered_) list.emplace_back(p.server, p.client);
      std::vector<pairing>().swap(unnumbered_);
      return pack_rounds(std::move(list));
    }
    // Each host in one pair of a round.
    std::vector<long> in_round(hosts_.size(), 0);
    std::vector<int> line_in(hosts_.size(), 0);
    std::vector<std::vector<pairing>> out;
    for (auto& [round, pairs] : numbered_) {
      for (const auto& p : pairs)
        for (int r : {p.server, p.client}) {
          auto at = static_cast<std::size_t>(r);
          if (in_round[at] == round)
            bad_line(name_, static_cast<std::size_t>(p.slot),
                     fmt::format("{} is in round {} already (line {})", fabric::printable(hosts_[at]), round, line_in[at]));
          in_round[at] = round;
          line_in[at] = p.slot;
        }
      out.push_back(std::move(pairs));
    }
    return numbered(std::move(out));
  }

private:
  /// The most lines a file may have: each pair keeps its line's number.
  static constexpr std::size_t most_lines = std::numeric_limits<int>::max();
  /// A word's most bytes: a host name's (255, as DNS's 253 and a name's
  /// own limit), or the sweep's longest name when longer.
  static constexpr std::size_t longest_name = 255;
  /// The header's comment lines kept, and the longest kept.
  static constexpr std::size_t most_header_lines = 64, longest_header_line = 4096;

  int rank_of(const std::string& word) const {
    // The same name, else the same short name (host_index's rule).
    if (auto it = by_name_.find(word); it != by_name_.end()) return it->second;
    if (auto it = by_short_.find(short_name(word)); it != by_short_.end()) return it->second;
    bad_line(name_, line_, fmt::format("{} is not one of the sweep's hosts", fabric::printable(word)));
  }

  void keep(std::string_view text) {
    if (header_.back().size() + text.size() <= longest_header_line) {
      header_.back().append(text);
      return;
    }
    header_.pop_back();  // no bar line is that long
    keeping_ = false;
  }

  void end_line() {
    keeping_ = false;
    if (count_ == 1) bad_line(name_, line_, "expected 'HOST HOST' or 'ROUND HOST HOST'");
    if (count_ > 0) take_line();
    count_ = 0;
    in_word_ = in_comment_ = false;
    if (++line_ > most_lines) fabric::cli::usage_error(fmt::format("--pairs {}: more than {} lines", fabric::printable(name_), most_lines));
  }

  void take_line() {
    bool numbered_line = count_ == 3;
    long round = 0;
    if (numbered_line) {
      auto number = fabric::whole_number<long>(words_[0]);
      if (!number || *number < 1 || *number > 1'000'000)
        bad_line(name_, line_, fmt::format("'{}' is not a round number (1 to 1000000)", fabric::printable(words_[0])));
      round = *number;
    }
    if (!with_rounds_) with_rounds_ = numbered_line;
    if (*with_rounds_ != numbered_line)
      bad_line(name_, line_,
               *with_rounds_ ? "no round number, where the first pair line has one"
                             : "a round number, where the first pair line has none");
    int a = rank_of(words_[count_ - 2]), b = rank_of(words_[count_ - 1]);
    if (a == b) bad_line(name_, line_, fmt::format("{} is paired with itself", fabric::printable(hosts_[static_cast<std::size_t>(a)])));
    pairing p{std::min(a, b), std::max(a, b), static_cast<int>(line_)};
    auto bit = static_cast<std::size_t>(p.client) * static_cast<std::size_t>(p.client - 1) / 2 + static_cast<std::size_t>(p.server);
    auto& word = paired_[bit / 64];
    if ((word >> (bit % 64) & 1) != 0)
      bad_line(name_, line_,
               fmt::format("{} and {} are paired on line {} already", fabric::printable(hosts_[static_cast<std::size_t>(p.server)]),
                           fabric::printable(hosts_[static_cast<std::size_t>(p.client)]), earlier_line(p)));
    word |= std::uint64_t{1} << (bit % 64);
    if (numbered_line) numbered_[round].push_back(p);
    else unnumbered_.push_back(p);
  }

  /// The line that named a pair before (an error's words: a search).
  int earlier_line(const pairing& p) const {
    auto same = [&](const pairing& x) { return x.server == p.server && x.client == p.client; };
    if (auto it = std::find_if(unnumbered_.begin(), unnumbered_.end(), same); it != unnumbered_.end()) return it->slot;
    for (const auto& [round, pairs] : numbered_)
      if (auto it = std::find_if(pairs.begin(), pairs.end(), same); it != pairs.end()) return it->slot;
    return 0;
  }

  std::string_view name_;
  const std::vector<std::string>& hosts_;
  std::unordered_map<std::string, int> by_name_, by_short_;
  std::size_t most_ = longest_name;
  std::size_t line_ = 1;
  std::array<std::string, 3> words_;
  std::size_t count_ = 0;  // words of this line so far
  bool in_word_ = false, in_comment_ = false, keeping_ = false;
  std::vector<std::string> header_;  // the comment lines before the first pair
  std::optional<bool> with_rounds_;  // as the first pair line says
  // The pairs so far, each pairing's slot the line that named it (until
  // the rounds are numbered); a bit a pair of hosts, for those named twice.
  std::vector<pairing> unnumbered_;
  std::map<long, std::vector<pairing>> numbered_;
  std::vector<std::uint64_t> paired_;
};

}  // namespace

std::vector<std::vector<pairing>> rounds_from_file(std::string_view text, std::string_view name,
                                                   const std::vector<std::string>& hosts) {
  pairs_reader file(name, hosts);
  file.feed(text);
  return file.finish();
}

std::vector<std::vector<pairing>> schedule_of(const run_options& r, const place& where, std::optional<double>* bar) {
  int n = static_cast<int>(where.hosts.size());
  if (r.quick) return quick_round(n);
  if (r.pairs_file.empty()) return rounds(n);
  // Read as it comes, where Ctrl-C is heard (a FIFO may stay quiet).
  auto cannot = [&] {
    fabric::cli::usage_error(fmt::format("--pairs {}: cannot read it: {}", fabric::printable(r.pairs_file), std::strerror(errno)));
  };
  fabric::unique_fd fd(::open(r.pairs_file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) cannot();
  pairs_reader file(r.pairs_file, where.hosts);
  std::string buf(std::size_t{1} << 16, '\0');
  for (;;) {
    fabric::wait_readable(fd.get(), fabric::deadline::never());
    auto got = ::read(fd.get(), buf.data(), buf.size());
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) cannot();
    if (got == 0) break;
    file.feed(std::string_view(buf.data(), static_cast<std::size_t>(got)));
  }
  auto out = file.finish();
  if (bar) *bar = file.bar(r.check);
  return out;
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
