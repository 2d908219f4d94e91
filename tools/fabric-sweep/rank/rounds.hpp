#pragma once
/// Who meets whom in which round, and on which port: every pair (the
/// circle method), ClusterKit's quick round, pairs packed into rounds,
/// and the rounds of a --pairs file.

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/place.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sweep {

/// One pair of a round: the lower rank serves, the higher connects.
struct pairing {
  int server = 0, client = 0;
  int slot = 0;  ///< its place in the round, for its port
};

/// A pair by its ranks, the server's (lower) first.
using rank_pair = std::pair<int, int>;

/// The circle method: every host meets every other exactly once, busy with
/// one peer per round; n - 1 rounds for even n, n for odd (a bye each).
std::vector<std::vector<pairing>> rounds(int n);

/// ClusterKit's quick mode: one round, rank i with rank i + n/2 (the
/// lower half of the hosts against the upper half); with n odd, a second
/// round of one pair, the last rank with rank n/2 - 1, so that every host
/// meets a peer.
std::vector<std::vector<pairing>> quick_round(int n);

/// Rounds that meet each pair once, each host busy with one peer a round:
/// the pairs in the order of their rounds by the circle method among the
/// hosts they name, each in the first round where both its hosts are
/// free. Every pair of m hosts takes m - 1 rounds (m odd: m), as rounds()
/// does; any other pairs of m hosts no more, and often fewer. Some
/// milliseconds a hundred thousand pairs; Ctrl-C is heard.
std::vector<std::vector<pairing>> pack_rounds(std::vector<rank_pair> pairs);

/// The rounds of a --pairs file (`text`, named `name` in errors):
/// 'HOST HOST' lines, packed into rounds, or 'ROUND HOST HOST' lines (as
/// ClusterKit's custom mode writes them), in the order of their numbers;
/// '#' starts a comment anywhere on a line; blank lines. An unknown host,
/// a host paired with itself, a pair named twice, a host twice in one
/// round, a line that does not parse, a word longer than any host's name
/// (255 bytes, or the sweep's longest), or a file of both forms is a
/// usage error naming the line. The text is read a line at a time, its
/// memory for the pairs alone; Ctrl-C is heard.
std::vector<std::vector<pairing>> rounds_from_file(std::string_view text, std::string_view name,
                                                   const std::vector<std::string>& hosts);

/// The rails of one meeting of a pair (--rails): the server's rail and
/// the client's, as indexes of the rails the ranks agreed on. Rail i with
/// rail i, or with --cross-rails any two; a host's own pair of rails
/// (intra) has the client leave from its rail for the server's.
struct rail_meeting {
  int server = 0, client = 0;
  bool operator==(const rail_meeting&) const = default;
  auto operator<=>(const rail_meeting&) const = default;
};

/// A pair's meetings on `rails` rails, in groups met one after another,
/// the meetings of a group all at once: rail i with rail i, one group of
/// `rails`; with `cross`, every rail of the server with every rail of the
/// client, `rails` groups of `rails` (group k meets the server's rail i
/// with the client's rail i + k, modulo `rails`), so that each rail is
/// busy with one meeting at a time.
std::vector<std::vector<rail_meeting>> rail_meetings(int rails, bool cross);
/// Some of a pair's meetings (its re-tests) in such groups: each in the
/// first group where neither of its rails is busy yet.
std::vector<std::vector<rail_meeting>> meeting_groups(std::vector<rail_meeting> meetings);
/// A meeting's place among its pair's, for its port: the server's rail;
/// with `cross`, the server's rail x `rails` + the client's.
int meeting_index(const rail_meeting& m, int rails, bool cross);
/// Every pair of a host's `rails` rails (intra), once: the client leaves
/// from rail i for the server on rail j, i < j, in that order.
std::vector<rail_meeting> intra_meetings(int rails);

/// How a run's rdma_cm ports are laid out: each step (a round, a re-test
/// round, the intra round) takes a block of ports above `base`, the
/// meetings of each of its pairs side by side, so that a late client never
/// reaches another round's, pair's or rail's server; the blocks are used
/// again from `base` once they run out.
struct port_plan {
  int base = 18515;
  int pairs = 1;     ///< pairs a round: n / 2 (at least 1)
  int meetings = 1;  ///< meetings a pair: 1, its rails, or their square (--cross-rails)
  int intra = 0;     ///< pairs of a host's own rails, when the run meets them (intra)

  /// A run's plan: n hosts, `rails` rails (0: one, the address rule's),
  /// `cross` rails, and whether it meets each host's own rails.
  static port_plan of(int base, int n, int rails = 0, bool cross = false, bool intra = false);
  /// Ports a step takes.
  [[nodiscard]] int width() const;
  /// Steps apart before a port comes round again.
  [[nodiscard]] int cycle() const;
  /// The port of meeting `meeting` of the pair in slot `slot` of step `step`.
  [[nodiscard]] int port(int step, int slot, int meeting = 0) const;
  /// The port of a host's intra pair `k` in step `step`.
  [[nodiscard]] int intra_port(int step, int k) const { return port(step, 0, k); }
};

/// The rdma_cm port of a pair of a run of one rail (port_plan::of(base, n)).
int pair_port(int base, int n, int round, const pairing& p);
/// Rounds apart before a pair's port comes round again, one rail.
int port_cycle(int base, int n);
/// What the client of a pair's check puts ahead of its connection request
/// and the server requires (fabric::pair_bounds::key): "FSWP", the step
/// (round) and the two ranks, so that a stranger dialling the port, or a
/// rank of another pair or step, is refused and the meeting goes on.
std::vector<std::byte> pair_key(int step, const pairing& p);
/// The key of one meeting of a pair on rails (--rails; intra: the host's
/// rank on both sides): "FSWR", the step, the two ranks and the two
/// rails, so that another rail's client is refused too. No key of one
/// rail starts another of rails, nor the other way round.
std::vector<std::byte> pair_key(int step, const pairing& p, const rail_meeting& rails);

/// The schedule of this run's rounds: every pair, --quick's one round, or
/// the --pairs file's rounds (read as it comes, as rounds_from_file reads
/// its text: a file of any size, or a FIFO, where Ctrl-C is heard). With
/// --pairs, `bar` (when given) takes the bar of the run whose outliers the
/// file holds: its "#bar" line for this check among the comments before
/// its first pair (report --outliers writes it there; bar_of_line).
std::vector<std::vector<pairing>> schedule_of(const run_options& r, const place& where,
                                              std::optional<double>* bar = nullptr);

}  // namespace sweep
