#pragma once
/// The report's first stage: its input cut into JSON texts (a launcher's
/// label taken off, srun's pieces of a long line joined: lines.cpp), and
/// what each text says that the report uses (words.cpp). Memory is for
/// one line at a time, never for the input.

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/verdict.hpp"

#include "fabric/base/stats.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace sweep {

/// The longest line the report reads (a rank's document of some 40,000
/// hosts); a longer one is skipped and counted, never fatal.
inline constexpr std::size_t max_line_bytes = std::size_t{32} << 20;

/// The longest host name the report takes, in bytes as read (a host
/// name's own limit; DNS allows 253): a pair naming a longer one is
/// skipped and counted, and a host list leaves it out, so that one name
/// of megabytes cannot make a table of gigabytes.
inline constexpr std::size_t max_host_name_bytes = 255;

/// What the line reader could not use, for the report's notes.
struct line_counts {
  std::size_t foreign = 0;    ///< lines that were not the sweep's (no JSON, another tool, pieces that never ended)
  std::size_t over_long = 0;  ///< lines (or joined pieces) longer than the limit
};

/// Cuts input into lines and hands on each JSON text whole: a label before
/// the first '{' (srun -l, clush, pdsh) is taken off, and srun's pieces of
/// a long line ("0: {...", "0: ...") are joined again, one waiting line per
/// label. A line longer than `max_line` is skipped to its end.
class line_joiner {
public:
  /// Receives each whole JSON text and the label it came with.
  using sink = std::function<void(std::string_view label, std::string_view json)>;
  explicit line_joiner(sink to, std::size_t max_line = max_line_bytes);
  ~line_joiner();
  line_joiner(const line_joiner&) = delete;
  line_joiner& operator=(const line_joiner&) = delete;

  /// Bytes of the input, as they come; lines may span calls.
  void feed(std::string_view bytes);
  /// The end of one input: a last line without '\n' is a line.
  void end_of_input();
  /// The end of all input: pieces still waiting never ended.
  void finish();
  [[nodiscard]] const line_counts& counts() const noexcept;

private:
  struct state;
  std::unique_ptr<state> s_;
};

/// Feeds a file descriptor to `to` until its end, waiting interruptibly
/// (Ctrl-C ends the read within a poll). Throws fabric::error(system) on
/// a read error.
void read_fd(int fd, line_joiner& to);

// ---- one line's word (words.cpp) ------------------------------------------

/// A direction of a bw pair: the bytes written in `seconds`, and Gb/s.
struct direction_figures {
  std::uint64_t bytes = 0;
  double seconds = 0, gbps = 0;
};
/// A bw pair's two directions, each unmeasured (--unidirectional) or not.
struct bandwidth_figures {
  std::optional<direction_figures> client_to_server, server_to_client;
};

/// A run's id as a line gives it: no "run" key at all (a line of a version
/// before runs), null (a rank that could not learn it), or an id.
struct run_tag {
  enum class kind : std::uint8_t { absent, null, named } is = kind::absent;
  std::string_view id;
};

/// Where a port is in the InfiniBand subnet, as a line gives it (a rank's
/// adapter, or the writing side of a pair line): its GUID and LID, each
/// when known.
struct port_ids {
  std::optional<std::uint64_t> guid;
  std::optional<std::uint16_t> lid;
  [[nodiscard]] bool known() const noexcept { return guid || lid; }
};

/// One side's word on one meeting of a pair, its strings in the line's
/// parse (valid until the next line is read).
struct side_record {
  std::string_view check, server, client, error;
  /// With --rails, the rail each side met on, by its agreed name (empty:
  /// one rail, null or absent). An intra pair's server and client are one
  /// host, met from client_rail to server_rail.
  std::string_view server_rail, client_rail;
  bool client_side = false, ok = false, retest = false;
  bool peer_absent = false;  ///< its failure is the peer's absence (false in lines of versions before it)
  std::uint32_t sweep = 1, round = 0;
  double elapsed_us = 0;
  std::optional<fabric::latency_summary> latency;
  std::optional<bandwidth_figures> bandwidth;
  port_ids own_port;  ///< the writing side's port (server or client, as `client_side` says)
};

/// What one JSON text says that the report uses.
struct line_word {
  bool sweeps = false;            ///< a fabric-sweep line of any kind
  run_tag run;
  std::optional<double> time;     ///< an event's unix time
  std::vector<std::string_view> hosts;  ///< a rank's every host (its started event, its document)
  std::optional<double> sweep_us; ///< a rank's whole sweep (its document)
  std::vector<side_record> pairs; ///< its result event, or its document's results
  /// A rank's plan when it meets only some hosts (--quick, --pairs): its
  /// host and those peers; plan_host empty when it meets every other.
  std::string_view plan_host;
  std::vector<std::string_view> plan_peers;
  /// A rank's host and its port (its `adapter`; of older lines, the MTU
  /// alone), from its started event or document.
  std::string_view port_host;
  std::optional<port_rate> port;
  port_ids port_in_subnet;  ///< its adapter's GUID and LID
  /// With --rails, the port of each of rail_host's rails: the rail's
  /// agreed name, its adapter's device and where that port is in the subnet.
  std::string_view rail_host;
  struct rail_port {
    std::string_view rail, device;
    port_ids ids;
  };
  std::vector<rail_port> rail_ports;
  /// The bars a rank's --pairs file carried from its first run (us for
  /// latency checks, Gb/s for bw), each within its option's range.
  std::optional<double> first_run_us, first_run_gbps;
  /// What a rank's document says it judged pairs by (its --outlier-factor,
  /// --bw-fraction and --expect-gbps), when every one is in range.
  std::optional<verdict_options> verdict;
  std::size_t malformed = 0;      ///< pair entries skipped for a wrong type or value
  std::size_t long_names = 0;     ///< pair entries skipped for a host name over max_host_name_bytes
  bool lone_surrogates = false;   ///< read with a lone UTF-16 surrogate escape (\ud800) as the text it is
};

/// Reads JSON texts with simdjson (measured some 20 times faster than
/// parsing each line into nlohmann::json, and bounded in depth: no
/// recursion on hostile nesting). One reader, reused line after line.
class line_reader {
public:
  line_reader();
  ~line_reader();
  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;
  /// The line's word; `sweeps` false for text that is not JSON or not
  /// fabric-sweep's. Never throws for bad input.
  const line_word& read(std::string_view json);

private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace sweep
