#pragma once
/// One pair as one side of it sees it: what the check is handed, what it
/// measured, and the pair's line of output (a human line, a JSON object).

#include "fabric-sweep/rank/checks.hpp"
#include "fabric-sweep/rank/rounds.hpp"
#include "fabric-sweep/verdict.hpp"
#include "fabric-sweep/options.hpp"

#include "fabric/base/meet.hpp"
#include "fabric/cli/fields.hpp"
#include "fabric/flows/rc_bandwidth.hpp"
#include "fabric/base/stats.hpp"
#include "fabric/verbs/ports.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace sweep {

/// What one side of one pair is to do, as the run hands it to its check.
struct pair_job {
  const run_options& options;
  bool serving = false;          ///< the server side listens and answers, the client side dials and measures
  std::string peer_addr;         ///< the peer's RDMA address (acm: the address each side looks up)
  /// This side's address on its rail (--rails): the server listens on it,
  /// the client leaves from it; empty for a run of one rail (the server
  /// listens on every address, the client leaves as the route says).
  std::string own_addr;
  std::uint16_t port = 0;
  fabric::pair_bounds bounds;    ///< meet the peer by bounds.meet, end within bounds.work of the meeting
};

/// One pair as one side saw it.
struct pair_result {
  sweep::check check = check::ping;
  int sweep = 0;                ///< which sweep of --repeat (0 the first)
  int round = 0;
  bool retest = false;          ///< an extra meeting of an outlier pair
  int server_rank = 0, client_rank = 0;
  std::string server, client;   ///< host names
  std::string role;             ///< which side this is: server, client
  /// The rails it met on (--rails), by index and by name; intra: the
  /// client left from client_rail for server_rail, both of one host.
  std::optional<rail_meeting> rails;
  std::string server_rail, client_rail;
  int port = 0;
  /// This side's port in the subnet (its adapter's), for the report to
  /// find the host on a fabric document; 0 when not known.
  std::uint64_t port_guid = 0;
  std::uint16_t lid = 0;
  bool ok = false;
  std::string error;
  /// The failure is the peer's absence (it did not come, or is gone), not
  /// this side's own: the report takes the peer's word over it.
  bool peer_absent = false;
  std::optional<fabric::latency_summary> latency;  ///< client side: round trips, or connection setup
  std::optional<double> connect_us;
  double elapsed_us = 0;        ///< the pair on this side, waiting for the peer included
  std::optional<std::uint64_t> pings;  ///< round trips completed (ping, ud)
  std::optional<std::uint64_t> received;  ///< the peer's datagrams heard (multicast)
  std::optional<std::uint64_t> connections;  ///< connections made (connect)
  std::optional<std::uint64_t> sent, lost;   ///< datagrams (ud; lost: client side)
  std::optional<std::uint64_t> lookups;      ///< ACM lookups answered (acm)
  std::optional<fabric::transfer> client_to_server, server_to_client;  ///< bw: each direction, as its writer measured it
};

/// The figures of a pair line, each with its JSON key and its words on
/// the human line (a check's say puts those its line gives).
namespace pair_field {
using fabric::cli::field;
inline constexpr field pings{"pings", "{} pings"};
inline constexpr field served_pings{"pings", "served {} pings"};
inline constexpr field served_datagrams{"pings", "served {} datagrams"};
inline constexpr field back{"pings", "{} back"};
inline constexpr field received{"received", "{} received"};
inline constexpr field heard{"received", "heard {} of the peer's datagrams"};
inline constexpr field connections{"connections", "{} connections"};
inline constexpr field accepted{"connections", "accepted {} connections"};
inline constexpr field sent{"sent", "sent {}"};
inline constexpr field lost{"lost", "{} lost"};
inline constexpr field lookups{"lookups", "{} lookups"};
inline constexpr field rtt{"latency", "rtt {}"};
inline constexpr field setup{"latency", "setup {}"};
inline constexpr field lookup_time{"latency", "{}"};
inline constexpr field connect_us{"connect_us", "connected in {:.0f} us"};
inline constexpr field elapsed_us{"elapsed_us", "{:.0f} us"};
}  // namespace pair_field

/// A port as the sweep's lines give it (a rank's `adapter`): device, port,
/// link layer, MTU, width, speed, rate, its data rate (data_rate_gbps), and
/// the GUIDs and LID that find it in the subnet.
nlohmann::json adapter_json(const fabric::port_info& p);
/// The facts of a port that its data rate comes from.
port_rate rate_facts(const fabric::port_info& p);

/// A bw pair's figure: its lower measured direction, in Gb/s; nullopt for
/// other checks, or before its figures came.
std::optional<double> lower_gbps(const pair_result& p);

/// One side of one pair, by its check's entry: fills `out`'s
/// measurements, throws fabric::error when the check failed.
void run_check(const pair_job& job, pair_result& out);

/// A pair's figures: every one in the JSON (null when the check has none),
/// and those its check's say gives on its human line.
fabric::cli::fields pair_fields(const pair_result& p, std::uint64_t size);

/// A pair line: one side's word on one pair, with the run it belongs to.
nlohmann::json pair_json(const pair_result& p, std::size_t index, const std::optional<std::string>& run);

/// The human line of a pair: "round 2: a <-> b: " and its check's line,
/// or the error; with --repeat, its sweep first; on rails, "a <-> b on
/// mlx5_1", "a <-> b on mlx5_0 <-> mlx5_1" (--cross-rails) or "a on
/// mlx5_0 -> mlx5_1" (intra).
std::string pair_line(const pair_result& p, bool repeating, std::uint64_t size);

}  // namespace sweep
