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

/// The rdma_cm port of a pair: distinct among the pairs of a round and
/// of the rounds near it, so that a late client never reaches another
/// round's server. Ports above `base` are taken round after round and
/// used again from `base` once they run out.
int pair_port(int base, int n, int round, const pairing& p);
/// Rounds apart before a pair's port comes round again.
int port_cycle(int base, int n);
/// What the client of a pair's check puts ahead of its connection request
/// and the server requires (fabric::pair_bounds::key): "FSWP", the step
/// (round) and the two ranks, so that a stranger dialling the port, or a
/// rank of another pair or step, is refused and the meeting goes on.
std::vector<std::byte> pair_key(int step, const pairing& p);

/// The schedule of this run's rounds: every pair, --quick's one round, or
/// the --pairs file's rounds (read as it comes, as rounds_from_file reads
/// its text: a file of any size, or a FIFO, where Ctrl-C is heard). With
/// --pairs, `bar` (when given) takes the bar of the run whose outliers the
/// file holds: its "#bar" line for this check among the comments before
/// its first pair (report --outliers writes it there; bar_of_line).
std::vector<std::vector<pairing>> schedule_of(const run_options& r, const place& where,
                                              std::optional<double>* bar = nullptr);

}  // namespace sweep
