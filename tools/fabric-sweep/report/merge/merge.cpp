// The matrix: every line's word gathered into one record per meeting of a
// pair (host indices, a row of pairs per host), run by run; then the
// latest run kept, each pair's final word chosen, and the pairs judged.
#include "fabric-sweep/report/merge/merge.hpp"

#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/cli/cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>
#include <tuple>
#include <unordered_set>

namespace sweep {

namespace {

struct text_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <class T>
using text_map = std::unordered_map<std::string, T, text_hash, std::equal_to<>>;

/// A pair's key (lo < hi), one number each, however many hosts come.
std::size_t triangle(std::uint32_t lo, std::uint32_t hi) { return std::size_t{hi} * (hi - 1) / 2 + lo; }

/// One side's word, its hosts by index, and the rail of each (0: none).
struct side_in {
  std::uint32_t server = 0, client = 0;
  const side_record* said = nullptr;
  std::uint16_t server_rail = 0, client_rail = 0;
};

/// A plane of the pairs as met: the rail of the pair's host first seen
/// (lo) and of the other (hi), one key.
using plane_key = std::uint32_t;
plane_key key_of(std::uint16_t lo_rail, std::uint16_t hi_rail) { return plane_key{lo_rail} << 16 | hi_rail; }
std::uint16_t lo_rail(plane_key k) { return static_cast<std::uint16_t>(k >> 16); }
std::uint16_t hi_rail(plane_key k) { return static_cast<std::uint16_t>(k & 0xffff); }

/// One meeting of a pair, both sides' words merged. Its pair's hosts are
/// the lower index `lo` and `hi`; `p.a_served` says whether lo listened.
struct meeting {
  merged_pair p;
  std::uint8_t seen = 0, passed = 0, failed = 0;  // bits: 1 the server's side, 2 the client's
  bool figures_from_client = false;
  bool error_is_absence = false;  // p.error only says the side's peer did not come
  // A digest of each side's word (said_by[side - 1]), to tell a side that
  // said it again with other words from one whose line came twice (its
  // event and its document): in the struct's padding, no memory of its own.
  std::uint8_t said_by[2] = {};
};

/// Eight bits of a side's word: whether it passed, why not, and its figures.
std::uint8_t digest(const side_record& s) {
  std::uint64_t h = 0xcbf29ce484222325;
  auto mix = [&](std::string_view bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3;
  };
  auto number = [&](double v) { mix(std::string_view(reinterpret_cast<const char*>(&v), sizeof v)); };
  mix(s.ok ? "ok" : "failed");
  mix(s.peer_absent ? "absent" : "");
  mix(s.error);
  number(s.elapsed_us);
  if (s.latency)
    for (double v : {s.latency->p50, s.latency->p99, s.latency->min, s.latency->max, s.latency->mean}) number(v);
  if (s.bandwidth)
    for (const auto& d : {s.bandwidth->client_to_server, s.bandwidth->server_to_client})
      if (d) number(d->gbps), number(d->seconds), number(static_cast<double>(d->bytes));
  for (int shift = 8; shift < 64; shift += 8) h ^= h >> shift;
  return static_cast<std::uint8_t>(h);
}

/// Each pair's latest sweep's round, a row per host: row `lo` holds the
/// meetings of lo with every host after it, `hi` at hi - lo - 1. The matrix
/// takes its pairs host by host and lets each host's row go once it has
/// them all (release), so that the records are not held twice.
class round_rows {
public:
  /// Room for the pairs of hosts 0..hosts-1 (what a rank's list names).
  void reserve(std::uint32_t hosts) {
    if (rows_.size() < hosts) rows_.resize(hosts);
    for (std::uint32_t lo = 0; lo < hosts; ++lo) rows_[lo].reserve(hosts - lo - 1);
  }
  meeting& at(std::uint32_t lo, std::uint32_t hi) {
    if (rows_.size() <= lo) rows_.resize(lo + 1);
    auto& row = rows_[lo];
    if (row.size() <= hi - lo - 1) row.resize(hi - lo);
    return row[hi - lo - 1];
  }
  /// The pair's round, when a side reported it.
  [[nodiscard]] const meeting* seen(std::uint32_t lo, std::uint32_t hi) const {
    if (lo >= rows_.size() || hi - lo - 1 >= rows_[lo].size()) return nullptr;
    const auto& m = rows_[lo][hi - lo - 1];
    return m.seen != 0 ? &m : nullptr;
  }
  /// Visits every reported round: visit(lo, hi, meeting).
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (std::uint32_t lo = 0; lo < rows_.size(); ++lo)
      for (std::uint32_t k = 0; k < rows_[lo].size(); ++k)
        if (rows_[lo][k].seen != 0) visit(lo, lo + k + 1, rows_[lo][k]);
  }
  /// Host lo's row is no longer needed: its memory goes.
  void release(std::uint32_t lo) {
    if (lo >= rows_.size()) return;
    freed_ += rows_[lo].capacity() * sizeof(meeting);
    std::vector<meeting>().swap(rows_[lo]);
    // glibc keeps a freed block in its heap unless it had a mapping of its
    // own, and it maps only blocks larger than the largest freed so far:
    // a row is then kept, and 2,000 hosts' rows (270 MB) would stay beside
    // the matrix (540 MB at the peak instead of 380). Each 32 MiB of rows
    // freed goes back to the system.
    if (freed_ >= trim_every) {
      freed_ = 0;
#ifdef __GLIBC__
      malloc_trim(0);
#endif
    }
  }

private:
  static constexpr std::size_t trim_every = std::size_t{32} << 20;
  std::vector<std::vector<meeting>> rows_;
  std::size_t freed_ = 0;
};

/// The meetings of one plane: each pair's latest sweep's round, and its
/// re-tests by triangle().
struct plane_rows {
  round_rows rounds;
  std::unordered_map<std::size_t, std::vector<meeting>> retests;
};

/// A rank's word on one of its rails' ports (--rails), by host and rail
/// number: the rail's device and where its port is in the subnet.
struct rail_port_said {
  std::uint32_t host = 0;
  std::uint16_t rail = 0;
  std::string device;
  port_ids ids;
};

/// The lines of one run.
struct run_store {
  run_tag::kind kind = run_tag::kind::absent;
  std::string id;
  double start = std::numeric_limits<double>::infinity();
  std::size_t lines = 0;
  bool has_pairs = false;  // of the matrix's check
  std::vector<std::uint32_t> hosts;  // the longest list a rank gave
  std::optional<double> sweep_us;
  std::map<plane_key, plane_rows> planes;  // one, (0, 0), without rails
  std::uint32_t row_hosts = 0;  // the hosts each plane's rows have room for
  bool partial_plan = false;  // a rank met only some hosts (--quick, --pairs)
  std::unordered_set<std::size_t> planned;  // then: the pairs its ranks planned, by triangle()
  std::optional<verdict_options> verdict;  // what its first rank document judged by
  bool judged_differently = false;         // another rank's document gave other options
  std::unordered_map<std::uint32_t, port_rate> ports;  // each rank's host's port, by host
  std::vector<port_ids> subnet_ports;  // each host's port in the subnet, by host

  /// A host's port in the subnet: its adapter's word stands, a pair
  /// line's fills in (a document saved with -j has no started event).
  void take_subnet_port(std::uint32_t host, const port_ids& ids, bool adapter) {
    if (!ids.known()) return;
    if (subnet_ports.size() <= host) subnet_ports.resize(host + 1);
    if (adapter || !subnet_ports[host].known()) subnet_ports[host] = ids;
  }
  std::optional<double> first_run_us, first_run_gbps;  // what its --pairs file carried
  /// Each host's rails' ports (--rails), by host and rail: its device and ids.
  std::map<std::pair<std::uint32_t, std::uint16_t>, std::pair<std::string, port_ids>> rail_ports;
  void take_rail_ports(std::vector<rail_port_said>&& said) {
    for (auto& r : said) rail_ports[{r.host, r.rail}] = {std::move(r.device), r.ids};
  }

  void take_first_run(std::optional<double> us, std::optional<double> gbps) {
    if (!first_run_us) first_run_us = us;
    if (!first_run_gbps) first_run_gbps = gbps;
  }
  plane_rows& plane(plane_key k) {
    auto [it, fresh] = planes.try_emplace(k);
    if (fresh) it->second.rounds.reserve(row_hosts);
    return it->second;
  }
  void take_verdict(const std::optional<verdict_options>& v) {
    if (!v) return;
    if (!verdict) verdict = v;
    else if (*verdict != *v) judged_differently = true;
  }
};

/// The hosts of pair lines that no rank's host list names, and their
/// pairs, skipped.
struct strangers {
  std::vector<std::uint32_t> hosts;
  std::size_t pairs = 0;
};

/// A line whose run is null, kept until the latest run is known.
struct orphan {
  std::optional<double> time;
  std::vector<std::uint32_t> hosts;
  std::optional<std::pair<std::uint32_t, port_rate>> port;  // its host and port
  std::optional<std::pair<std::uint32_t, port_ids>> subnet_port;  // and where that port is in the subnet
  std::vector<rail_port_said> rail_ports;
  std::optional<double> first_run_us, first_run_gbps;
  std::optional<double> sweep_us;
  std::vector<std::uint32_t> plan;  // a rank's host, then its planned peers (--quick, --pairs)
  std::optional<verdict_options> verdict;
  std::vector<std::pair<side_in, side_record>> pairs;  // the records' texts in `texts`
  std::vector<std::string> texts;
};

}  // namespace

/// The longest pair error the matrix keeps (an error line's bound).
constexpr std::size_t max_error_bytes = 1024;

struct matrix_builder::state {
  std::optional<check> only;
  line_reader reader;
  text_map<std::uint32_t> ids;
  std::vector<std::string> names;
  text_map<std::uint32_t> error_ids;
  std::vector<std::string> errors;
  text_map<std::size_t> run_ids;  // named runs
  std::vector<run_store> runs;
  std::optional<std::size_t> unnamed;
  std::vector<orphan> orphans;
  // The last time each rank's stream gave in each run, within the input
  // being read: a stream is a label, and a run's tag, in one input.
  text_map<double> stream_time;
  std::string stream;  // the key of the line being read
  std::size_t foreign = 0, malformed = 0, long_names = 0, lone_surrogates = 0, other_checks = 0, lines_seen = 0;
  std::size_t said_otherwise = 0;  // a side's word on a meeting again, other than before
  bool asked = false;              // the check was given (report --check)
  std::size_t wanted_lines = 0;    // pair lines of the check
  std::map<std::string, std::size_t, std::less<>> other_check_lines;  // of each other check

  text_map<std::uint16_t> rail_ids;
  std::vector<std::string> rails{std::string()};  // rail 0: none
  std::size_t rails_over = 0;                     // sides on rails past the most the report tells apart

  /// A rail's number, 0 for none; past 65535 rails (no host has them),
  /// the pair is skipped and counted.
  std::optional<std::uint16_t> rail(std::string_view name) {
    if (name.empty()) return 0;
    if (auto it = rail_ids.find(name); it != rail_ids.end()) return it->second;
    if (rails.size() > std::numeric_limits<std::uint16_t>::max()) return std::nullopt;
    auto id = static_cast<std::uint16_t>(rails.size());
    rails.emplace_back(name);
    rail_ids.emplace(rails.back(), id);
    return id;
  }
  /// A rank's word on its rails' ports, its host and rails by number.
  std::vector<rail_port_said> rail_ports_of(const line_word& w) {
    std::vector<rail_port_said> out;
    if (w.rail_ports.empty()) return out;
    auto who = host(w.rail_host);
    for (const auto& r : w.rail_ports)
      if (auto id = rail(r.rail)) out.push_back({who, *id, std::string(r.device), r.ids});
    return out;
  }
  /// A side as the matrix takes it: its hosts and rails by number; an
  /// intra pair's two ends are its host's two rails ("host/rail").
  std::optional<side_in> side(const side_record& p) {
    if (p.check == check_name(check::intra))
      return side_in{host(fmt::format("{}/{}", p.server, p.server_rail)), host(fmt::format("{}/{}", p.client, p.client_rail)),
                     &p};
    auto sr = rail(p.server_rail), cr = rail(p.client_rail);
    if (!sr || !cr) return ++rails_over, std::nullopt;
    return side_in{host(p.server), host(p.client), &p, *sr, *cr};
  }

  std::uint32_t host(std::string_view name) {
    if (auto it = ids.find(name); it != ids.end()) return it->second;
    auto id = static_cast<std::uint32_t>(names.size());
    names.emplace_back(name);
    ids.emplace(names.back(), id);
    return id;
  }
  /// A pair's error, each text kept once; a line's may be megabytes long,
  /// the matrix keeps its head and tail.
  std::uint32_t error(std::string_view text) {
    if (text.empty()) return 0;
    if (text.size() > max_error_bytes) return error(fabric::shortened(std::string(text), max_error_bytes));
    if (auto it = error_ids.find(text); it != error_ids.end()) return it->second;
    errors.emplace_back(text);
    auto id = static_cast<std::uint32_t>(errors.size());
    error_ids.emplace(errors.back(), id);
    return id;
  }
  run_store& run_of(const run_tag& tag) {
    if (tag.is == run_tag::kind::named) {
      if (auto it = run_ids.find(tag.id); it != run_ids.end()) return runs[it->second];
      run_ids.emplace(std::string(tag.id), runs.size());
      auto& r = runs.emplace_back();
      r.kind = tag.is;
      r.id = tag.id;
      return r;
    }
    if (!unnamed) {
      unnamed = runs.size();
      runs.emplace_back();
    }
    return runs[*unnamed];
  }
  std::vector<std::uint32_t> host_ids(const std::vector<std::string_view>& list) {
    std::vector<std::uint32_t> out;
    out.reserve(list.size());
    for (auto h : list) out.push_back(host(h));
    return out;
  }
  void take_hosts(run_store& r, std::vector<std::uint32_t> list) {
    if (list.size() <= r.hosts.size()) return;
    r.hosts = std::move(list);
    r.row_hosts = *std::max_element(r.hosts.begin(), r.hosts.end()) + 1;
    for (auto& [key, rows] : r.planes) rows.rounds.reserve(r.row_hosts);
  }
  /// A rank's plan: its host, then the peers its rounds meet.
  static void take_plan(run_store& r, const std::vector<std::uint32_t>& plan) {
    if (plan.empty()) return;
    r.partial_plan = true;
    for (std::size_t i = 1; i < plan.size(); ++i)
      r.planned.insert(triangle(std::min(plan[0], plan[i]), std::max(plan[0], plan[i])));
  }
  std::vector<std::uint32_t> plan_of(const line_word& w) {
    std::vector<std::uint32_t> plan;
    if (w.plan_host.empty()) return plan;
    plan.push_back(host(w.plan_host));
    for (auto h : w.plan_peers) plan.push_back(host(h));
    return plan;
  }
  /// Whether a pair line counts for the matrix: its check is the one.
  bool wanted(std::string_view c) {
    if (!only) only = check_of(c).value_or(check::ping);
    if (c == check_name(*only)) return ++wanted_lines, true;
    ++other_checks;
    if (auto it = other_check_lines.find(c); it != other_check_lines.end()) ++it->second;
    else other_check_lines.emplace(std::string(c), 1);
    return false;
  }
  void absorb(run_store& r, const side_in& in);

  // The stages of finish(), in their order.
  run_store& keep_latest_run(run_choice& chosen);
  std::size_t join_orphans(run_store& run, run_choice& chosen);
  std::vector<std::uint32_t> host_order(const run_store& run, bool intra, strangers& outside) const;
  void final_words(run_store& run, const std::vector<std::uint32_t>& order, matrix& m);
  void take_run_facts(const run_store& run, const std::vector<std::uint32_t>& order, matrix& m) const;
  void add_notes(matrix& m, const line_counts& lines, std::size_t joined, const strangers& outside) const;
};

void matrix_builder::state::absorb(run_store& r, const side_in& in) {
  const auto& s = *in.said;
  r.has_pairs = true;
  r.take_subnet_port(s.client_side ? in.client : in.server, s.own_port, false);
  auto lo = std::min(in.server, in.client), hi = std::max(in.server, in.client);
  auto& plane = r.plane(in.server == lo ? key_of(in.server_rail, in.client_rail) : key_of(in.client_rail, in.server_rail));
  if (s.check == check_name(check::intra)) {
    // Only a host's own rails meet: every other pair of ends is no pair.
    r.partial_plan = true;
    r.planned.insert(triangle(lo, hi));
  }
  auto fresh = [&] {
    meeting m;
    m.p.sweep = s.sweep;
    m.p.round = s.round;
    m.p.a_served = in.server == lo;
    return m;
  };
  meeting* at = nullptr;
  if (!s.retest) {
    auto& m = plane.rounds.at(lo, hi);
    auto said = std::pair{s.sweep, s.round}, kept = std::pair{m.p.sweep, m.p.round};
    // With --repeat, a pair is its latest sweep's word: the older ones go.
    if (m.seen == 0 || said > kept) m = fresh();
    else if (said < kept) return;
    at = &m;
  } else {
    auto& list = plane.retests[triangle(lo, hi)];
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const meeting& m) { return m.p.sweep == s.sweep && m.p.round == s.round; });
    at = it != list.end() ? &*it : &list.emplace_back(fresh());
  }
  auto& m = *at;
  std::uint8_t side = s.client_side ? 2 : 1;
  auto word = digest(s);
  if ((m.seen & side) != 0 &&
      (m.said_by[side - 1] != word || (s.ok && (m.failed & side) != 0) || (!s.ok && (m.passed & side) != 0)))
    ++said_otherwise;
  m.said_by[side - 1] = word;
  m.seen |= side;
  m.p.elapsed_us = std::max(m.p.elapsed_us, s.elapsed_us);
  // The client's word is the measurement; a failure from either side
  // stands. Its error: a side's own failure, over one that only says its
  // peer did not come or is gone (the side that failed first on its own
  // moved on, and its peer waited for it); between two alike, the client's.
  if (!s.ok) {
    m.failed |= side;
    if (m.p.error == 0 || (m.error_is_absence && !s.peer_absent) || (s.client_side && m.error_is_absence == s.peer_absent)) {
      m.p.error = error(s.error);
      m.error_is_absence = s.peer_absent;
    }
    return;
  }
  m.passed |= side;
  if (s.client_side && s.latency) m.p.figures = *s.latency;
  // A bw side carries both directions once it heard the peer's: the
  // client's word stands, the server's fills in without it.
  if (s.bandwidth && (s.client_side || !m.figures_from_client)) {
    m.p.figures = *s.bandwidth;
    m.figures_from_client = s.client_side;
  }
}

matrix_builder::matrix_builder(std::optional<check> only) : s_(std::make_unique<state>()) {
  s_->only = only;
  s_->asked = only.has_value();
}
matrix_builder::~matrix_builder() = default;

void matrix_builder::end_of_input() { s_->stream_time.clear(); }

void matrix_builder::add(std::string_view label, std::string_view json) {
  auto& s = *s_;
  if ((++s.lines_seen & 0xfff) == 0) fabric::throw_if_interrupted();
  const auto& w = s.reader.read(json);
  if (!w.sweeps) {
    ++s.foreign;
    return;
  }
  s.malformed += w.malformed;
  s.long_names += w.long_names;
  if (w.lone_surrogates) ++s.lone_surrogates;
  // A rank's document has no time: it is as old as its stream's last
  // event of the same run. Another run's time, or another input's, says
  // nothing of it (a document saved with -j beside a newer run's lines).
  std::optional<double> time = w.time;
  s.stream.assign(label);
  s.stream += '\0';
  s.stream += static_cast<char>(w.run.is);
  s.stream += w.run.id;
  auto it = s.stream_time.find(s.stream);
  if (time && it != s.stream_time.end()) it->second = *time;
  else if (time) s.stream_time.emplace(s.stream, *time);
  else if (it != s.stream_time.end()) time = it->second;
  if (w.run.is == run_tag::kind::null) {
    auto& o = s.orphans.emplace_back();
    o.time = time;
    o.hosts = s.host_ids(w.hosts);
    o.sweep_us = w.sweep_us;
    o.plan = s.plan_of(w);
    o.verdict = w.verdict;
    if (w.port) o.port = std::pair{s.host(w.port_host), *w.port};
    if (w.port) o.subnet_port = std::pair{s.host(w.port_host), w.port_in_subnet};
    o.rail_ports = s.rail_ports_of(w);
    o.first_run_us = w.first_run_us;
    o.first_run_gbps = w.first_run_gbps;
    for (const auto& p : w.pairs) {
      if (!s.wanted(p.check)) continue;
      auto in = s.side(p);
      if (!in) continue;
      in->said = nullptr;
      o.texts.emplace_back(p.error);
      auto& [kept, rec] = o.pairs.emplace_back(*in, p);
      // Views of this line's parse, gone with the next; the check is the
      // matrix's, the hosts and rails are numbers now.
      rec.check = check_name(*s.only);
      rec.server = rec.client = rec.error = rec.server_rail = rec.client_rail = {};
    }
    return;
  }
  auto& r = s.run_of(w.run);
  ++r.lines;
  if (time) r.start = std::min(r.start, *time);
  if (!w.hosts.empty()) s.take_hosts(r, s.host_ids(w.hosts));
  if (w.sweep_us) r.sweep_us = std::max(r.sweep_us.value_or(0.0), *w.sweep_us);
  state::take_plan(r, s.plan_of(w));
  r.take_verdict(w.verdict);
  if (w.port) {
    r.ports[s.host(w.port_host)] = *w.port;
    r.take_subnet_port(s.host(w.port_host), w.port_in_subnet, true);
  }
  r.take_rail_ports(s.rail_ports_of(w));
  r.take_first_run(w.first_run_us, w.first_run_gbps);
  for (const auto& p : w.pairs)
    if (s.wanted(p.check))
      if (auto in = s.side(p)) s.absorb(r, *in);
}

namespace {

/// When the hosts' ports have different MTUs (each rank's started event
/// says its own): a note naming the hosts apart from the most, whose
/// packets larger than a peer's MTU are dropped on the way to it (a host
/// whose interface came up with another MTU than the fleet's: its pairs
/// fail or crawl only with larger messages, and no pair says why).
std::optional<std::string> mtu_note(const std::vector<std::pair<std::string_view, std::uint32_t>>& by_host) {
  std::map<std::uint32_t, std::vector<std::string_view>> hosts_of;
  for (const auto& [host, mtu] : by_host) hosts_of[mtu].push_back(host);
  if (hosts_of.size() < 2) return std::nullopt;
  auto most = std::max_element(hosts_of.begin(), hosts_of.end(),
                               [](const auto& x, const auto& y) { return x.second.size() < y.second.size(); });
  constexpr std::size_t names_up_to = 8;
  std::string apart;
  for (const auto& [mtu, hosts] : hosts_of) {
    if (mtu == most->first) continue;
    std::string names;
    for (std::size_t i = 0; i < hosts.size() && i < names_up_to; ++i)
      names += fmt::format("{}{}", i == 0 ? "" : ", ", fabric::printable_utf8(hosts[i]));
    if (hosts.size() > names_up_to) names += fmt::format(" and {} more", hosts.size() - names_up_to);
    apart += fmt::format("{}{} {}", apart.empty() ? "" : "; ", names, mtu);
  }
  return fmt::format("the hosts' port MTUs differ: {}; the other {} {} (a packet larger than a peer's MTU is "
                     "dropped on its way there)",
                     apart, fabric::counted(most->second.size(), "host"), most->first);
}

bool better(check c, const merged_pair& x, const merged_pair& than) {
  auto fx = x.figure(), ft = than.figure();
  if (!fx) return false;
  if (!ft) return true;
  return measures_bandwidth(c) ? *fx > *ft : *fx < *ft;
}

}  // namespace

/// A run without times is the oldest.
double start_of(const run_store& r) { return std::isinf(r.start) ? -std::numeric_limits<double>::infinity() : r.start; }

run_store& matrix_builder::state::keep_latest_run(run_choice& chosen) {
  // The one that started last among those with pairs of the check (all
  // of them when none has).
  std::optional<std::size_t> kept;
  bool any_pairs = std::any_of(runs.begin(), runs.end(), [](const run_store& r) { return r.has_pairs; });
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    if (any_pairs && !r.has_pairs) continue;
    if (!kept || start_of(r) >= start_of(runs[*kept])) kept = i;
  }
  if (!kept) {
    kept = runs.size();
    runs.emplace_back();
  }
  // A run that started later but has no pairs of the check is no earlier
  // run: it is named apart, and the kept one is not called the latest.
  auto kept_start = start_of(runs[*kept]);
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (i != *kept && runs[i].lines > 0) {
      if (start_of(runs[i]) > kept_start) {
        ++chosen.later_runs;
        chosen.later_lines += runs[i].lines;
        if (runs[i].kind == run_tag::kind::named) chosen.later_ids.push_back(fabric::printable_utf8(runs[i].id));
      } else {
        ++chosen.earlier_runs;
        chosen.earlier_lines += runs[i].lines;
      }
      runs[i] = {};  // its memory, before the matrix takes more
    }
  auto& run = runs[*kept];
  if (run.kind == run_tag::kind::named) chosen.id = run.id;
  if (!std::isinf(run.start)) chosen.started = run.start;
  return run;
}

std::size_t matrix_builder::state::join_orphans(run_store& run, run_choice& chosen) {
  // A line whose run is null is the kept run's when no older than its start.
  std::size_t joined = 0;
  for (auto& line : orphans) {
    if (line.time && start_of(run) > *line.time) {
      ++chosen.earlier_lines;
      continue;
    }
    ++joined;
    if (!line.hosts.empty()) take_hosts(run, std::move(line.hosts));
    if (line.sweep_us) run.sweep_us = std::max(run.sweep_us.value_or(0.0), *line.sweep_us);
    take_plan(run, line.plan);
    run.take_verdict(line.verdict);
    if (line.port) run.ports[line.port->first] = line.port->second;
    if (line.subnet_port) run.take_subnet_port(line.subnet_port->first, line.subnet_port->second, true);
    run.take_rail_ports(std::move(line.rail_ports));
    run.take_first_run(line.first_run_us, line.first_run_gbps);
    for (std::size_t i = 0; i < line.pairs.size(); ++i) {
      auto& [in, rec] = line.pairs[i];
      rec.error = line.texts[i];
      in.said = &rec;
      absorb(run, in);
    }
  }
  orphans.clear();
  return joined;
}

std::vector<std::uint32_t> matrix_builder::state::host_order(const run_store& run, bool intra, strangers& outside) const {
  // The longest list a rank of the run gave, then any other host its
  // pairs name, in the order first seen: in lines of versions before the
  // lists. When the ranks gave lists, a host none names is no host of the
  // sweep (a line of another fleet, or one that lies): its pairs would
  // make up missing pairs and a worst host. They are skipped and counted.
  constexpr auto none = std::numeric_limits<std::uint32_t>::max();
  // An intra matrix's ends are its hosts' rails, that no host list names:
  // in their names' order, each host's rails side by side.
  const std::vector<std::uint32_t> no_list;
  const auto& listed = intra ? no_list : run.hosts;
  auto met = [&](std::uint32_t lo, std::uint32_t hi) {
    return std::any_of(run.planes.begin(), run.planes.end(), [&](const auto& plane) {
      return plane.second.rounds.seen(lo, hi) || plane.second.retests.contains(triangle(lo, hi));
    });
  };
  std::vector<std::uint32_t> order = listed;
  std::vector<std::uint32_t> place(names.size(), none);
  for (std::uint32_t i = 0; i < order.size(); ++i)
    if (place[order[i]] == none) place[order[i]] = i;
    else order[i] = none;  // a name twice in a list: once
  std::erase(order, none);
  for (std::uint32_t i = 0; i < order.size(); ++i) place[order[i]] = i;
  for (std::uint32_t hi = 1; hi < names.size(); ++hi)
    for (std::uint32_t lo = 0; lo < hi; ++lo)
      if ((place[lo] == none || place[hi] == none) && met(lo, hi)) {
        if (!listed.empty()) {
          ++outside.pairs;
          for (auto h : {lo, hi})
            if (place[h] == none) outside.hosts.push_back(h);
          continue;
        }
        for (auto h : {lo, hi})
          if (place[h] == none) {
            place[h] = static_cast<std::uint32_t>(order.size());
            order.push_back(h);
          }
      }
  std::sort(outside.hosts.begin(), outside.hosts.end());
  outside.hosts.erase(std::unique(outside.hosts.begin(), outside.hosts.end()), outside.hosts.end());
  if (intra) std::sort(order.begin(), order.end(), [&](auto x, auto y) { return names[x] < names[y]; });
  return order;
}

void matrix_builder::state::final_words(run_store& run, const std::vector<std::uint32_t>& order, matrix& m) {
  // Each pair's final word: its latest sweep's round, unless it was met
  // again: then the best of its re-tests stands (an outlier that passes
  // once was passing traffic; one that fails every time is failed).
  auto state_of = [&](const meeting& x) {
    if (x.seen == 0) return pair_state::missing;
    if (x.failed != 0) return pair_state::failed;
    // A delivery check passes a pair when each side heard the other.
    if (kind_of(m.check).judged == judged_by::delivery && x.passed != 3) return pair_state::failed;
    return pair_state::ok;
  };
  std::map<std::uint32_t, double> slowest;  // the latest sweep's rounds
  std::uint32_t latest_sweep = 0;
  for (const auto& [key, plane] : run.planes) {
    plane.rounds.for_each(
        [&](std::uint32_t, std::uint32_t, const meeting& x) { latest_sweep = std::max(latest_sweep, x.p.sweep); });
    for (const auto& [index, list] : plane.retests)
      for (const auto& x : list) latest_sweep = std::max(latest_sweep, x.p.sweep);
  }
  // The figures of the latest sweep's rounds, which the verdicts' bar is
  // made of: a re-test ran beside fewer pairs than a round (alone, at the
  // end), so its figure is judged against the bar but not part of it.
  bool by_time = kind_of(m.check).judged == judged_by::time;
  auto final_word = [&](std::uint32_t lo, std::uint32_t hi, std::uint32_t a, std::uint32_t b, const meeting* round,
                        const std::vector<meeting>* again) {
    std::uint32_t latest = round ? round->p.sweep : 0;
    if (again)
      for (const auto& x : *again) latest = std::max(latest, x.p.sweep);
    auto state_named = [&](const meeting& x) {
      auto st = state_of(x);
      merged_pair p = x.p;
      p.state = st;
      if (st == pair_state::failed && x.failed == 0) {
        // Multicast: a pair passes when each of the two heard the other.
        auto said = names[(x.passed & 2) != 0 ? (x.p.a_served ? hi : lo) : (x.p.a_served ? lo : hi)];
        p.error = error(fmt::format("only {} reported the pair; each must have heard the other", said));
      }
      return p;
    };
    merged_pair out;
    if (round && round->p.sweep == latest) {
      out = state_named(*round);
      if (auto f = out.figure(); f && out.state == pair_state::ok) {
        m.round_figures.push_back(*f);
        if (by_time) m.round_hosts.emplace_back(a, b);
      }
    }
    if (again) {
      const merged_pair* best = nullptr;
      std::optional<merged_pair> failed;
      std::vector<merged_pair> named;
      named.reserve(again->size());
      std::uint16_t retests = 0;
      for (const auto& x : *again) {
        if (x.p.sweep != latest) continue;
        ++retests;
        named.push_back(state_named(x));
      }
      for (const auto& x : named) {
        if (x.state == pair_state::ok && (!best || better(m.check, x, *best))) best = &x;
        if (x.state == pair_state::failed && !failed) failed = x;
      }
      if (retests > 0) {
        std::optional<double> first = out.latency() ? std::optional(out.latency()->p50) : std::nullopt;
        if (best) out = *best;
        else if (failed) {
          out = *failed;
          out.every_retest_failed = true;
        }
        out.retests = retests;
        out.first_p50_us = first;
      }
    }
    // Every meeting of the latest sweep took its round's time.
    auto count_round = [&](const meeting& x) {
      if (x.p.sweep == latest_sweep && x.p.round > 0) slowest[x.p.round] = std::max(slowest[x.p.round], x.p.elapsed_us);
    };
    if (round) count_round(*round);
    if (again)
      for (const auto& x : *again) count_round(x);
    return out;
  };
  // The planes in the matrix's order: host a's rail first. A plane met
  // from x of its first seen host to y of the other is plane (y, x) where
  // the order puts that host second; with --cross-rails both are.
  std::vector<std::pair<std::uint16_t, std::uint16_t>> planes;
  for (const auto& [key, rows] : run.planes) {
    planes.emplace_back(lo_rail(key), hi_rail(key));
    planes.emplace_back(hi_rail(key), lo_rail(key));
  }
  std::sort(planes.begin(), planes.end(), [&](const auto& x, const auto& y) {
    return std::tuple(x.first != x.second, rails[x.first], rails[x.second]) <
           std::tuple(y.first != y.second, rails[y.first], rails[y.second]);
  });
  planes.erase(std::unique(planes.begin(), planes.end()), planes.end());
  if (planes.empty()) planes.emplace_back(0, 0);
  m.planes.clear();
  for (auto [x, y] : planes) m.planes.push_back({rails[x], rails[y]});
  // The pairs in the matrix's order, plane after plane, host a's with
  // each later host b; with one plane, once a has them all, its row of
  // rounds goes.
  auto n = static_cast<std::uint32_t>(order.size());
  m.pairs.reserve(n < 2 ? 0 : planes.size() * (std::size_t{n} * (n - 1) / 2));
  for (std::uint16_t at = 0; at < planes.size(); ++at) {
    auto [x, y] = planes[at];
    for (std::uint32_t a = 0; a < n; ++a) {
      fabric::throw_if_interrupted();
      for (std::uint32_t b = a + 1; b < n; ++b) {
        auto lo = std::min(order[a], order[b]), hi = std::max(order[a], order[b]);
        auto rows = run.planes.find(order[a] == lo ? key_of(x, y) : key_of(y, x));
        const meeting* round = nullptr;
        const std::vector<meeting>* again = nullptr;
        if (rows != run.planes.end()) {
          round = rows->second.rounds.seen(lo, hi);
          auto& retests = rows->second.retests;
          auto it = retests.empty() ? retests.end() : retests.find(triangle(lo, hi));
          if (it != retests.end()) again = &it->second;
        }
        auto& out = m.pairs.emplace_back();
        if (round || again) {
          out = final_word(lo, hi, a, b, round, again);
          if (order[a] > order[b]) out.a_served = !out.a_served;  // it said whether lo listened
        }
        out.a = a;
        out.b = b;
        out.plane = at;
      }
      if (run.planes.size() == 1) run.planes.begin()->second.rounds.release(order[a]);
    }
  }
  // A plan of some pairs (--quick, --pairs): a pair no rank planned and
  // none met is not the run's to judge.
  if (run.partial_plan)
    for (auto& p : m.pairs)
      if (p.state == pair_state::missing && p.sweep == 0 &&
          !run.planned.contains(triangle(std::min(order[p.a], order[p.b]), std::max(order[p.a], order[p.b]))))
        p.state = pair_state::unplanned;
  m.count_states();
  m.rounds = static_cast<int>(slowest.size());
  for (const auto& [r, us] : slowest) m.rounds_slowest_us += us;
}

void matrix_builder::state::take_run_facts(const run_store& run, const std::vector<std::uint32_t>& order,
                                           matrix& m) const {
  m.sweep_us = run.sweep_us;
  m.sweeps_verdict = run.verdict;
  m.sweeps_disagree = run.judged_differently;
  m.carried_bar = measures_bandwidth(m.check) ? run.first_run_gbps : run.first_run_us;
  std::vector<std::pair<std::string_view, std::uint32_t>> mtus;
  m.ports.assign(order.size(), std::nullopt);
  m.subnet_ports.assign(order.size(), {});
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] < run.subnet_ports.size()) m.subnet_ports[i] = run.subnet_ports[order[i]];
  m.rail_ports.clear();
  m.rail_ports.reserve(run.rail_ports.size());
  for (const auto& [key, port] : run.rail_ports) m.rail_ports.push_back({names[key.first], rails[key.second], port.first, port.second});
  for (std::size_t i = 0; i < order.size(); ++i)
    if (auto it = run.ports.find(order[i]); it != run.ports.end()) {
      m.ports[i] = it->second;
      if (it->second.mtu > 0) mtus.emplace_back(names[order[i]], it->second.mtu);
    }
  if (auto note = mtu_note(mtus)) m.notes.push_back(std::move(*note));
}

void matrix_builder::state::add_notes(matrix& m, const line_counts& lines, std::size_t joined,
                                      const strangers& outside) const {
  std::vector<std::string> notes;
  auto were = [](std::size_t n) { return n == 1 ? "was" : "were"; };
  if (auto skipped = foreign + lines.foreign; skipped > 0)
    notes.push_back(fmt::format("{} not the sweep's and {} skipped", fabric::counted(skipped, "line was", "lines were"),
                                were(skipped)));
  if (lines.over_long > 0)
    notes.push_back(fmt::format("{} longer than {} MiB {} skipped", fabric::counted(lines.over_long, "line"),
                                max_line_bytes >> 20, were(lines.over_long)));
  if (malformed > 0)
    notes.push_back(fmt::format("{} of a wrong shape (a field of the wrong type or value) {} skipped",
                                fabric::counted(malformed, "pair line"), were(malformed)));
  if (lone_surrogates > 0)
    notes.push_back(fmt::format("{} a UTF-16 surrogate escape without its other half (\\ud800: no character), "
                                "read as that text",
                                fabric::counted(lone_surrogates, "line had", "lines had")));
  if (long_names > 0)
    notes.push_back(fmt::format("{} naming a host of more than {} bytes (no host's name is that long) {} skipped",
                                fabric::counted(long_names, "pair line"), max_host_name_bytes,
                                were(long_names)));
  if (rails_over > 0)
    notes.push_back(fmt::format("{} on rails past the {} the report tells apart {} skipped",
                                fabric::counted(rails_over, "pair line"), std::numeric_limits<std::uint16_t>::max(),
                                were(rails_over)));
  if (other_checks > 0)
    notes.push_back(fmt::format("{} of other checks than {} {} skipped (report --check chooses)",
                                fabric::counted(other_checks, "pair line"), check_name(m.check), were(other_checks)));
  const auto& run = m.run;
  auto check = check_name(m.check);
  if (run.earlier_runs > 0 || run.earlier_lines > 0)
    notes.push_back(fmt::format("the latest run{}{} is reported: {} {} skipped",
                                run.later_runs > 0 ? fmt::format(" with {} pair lines", check) : std::string(),
                                run.id ? " (" + fabric::printable_utf8(*run.id) + ")" : std::string(),
                                run.earlier_runs > 0
                                    ? fmt::format("{} of {}", fabric::counted(run.earlier_lines, "line"),
                                                  fabric::counted(run.earlier_runs, "earlier run"))
                                    : fabric::counted(run.earlier_lines, "line without a run id, older than it,",
                                                      "lines without a run id, older than it,"),
                                were(run.earlier_lines)));
  if (run.later_runs > 0)
    notes.push_back(fmt::format("{}{} {} no {} pair lines (a sweep under way, or another check's): {} {} skipped",
                                fabric::counted(run.later_runs, "later run"),
                                run.later_ids.empty() ? std::string() : fmt::format(" ({})", fmt::join(run.later_ids, ", ")),
                                run.later_runs == 1 ? "has" : "have", check, run.later_runs == 1 ? "its" : "their",
                                fabric::counted(run.later_lines, "line was", "lines were")));
  if (joined > 0)
    notes.push_back(fmt::format("{} without a run id {} taken as the latest run's", fabric::counted(joined, "line"),
                                were(joined)));
  if (said_otherwise > 0)
    notes.push_back(fmt::format("{} a side's word on a meeting of a pair again, with other words than before (lines of "
                                "two runs without run ids, or edited): a failure of either stands, else the later "
                                "figures",
                                fabric::counted(said_otherwise, "pair line gave", "pair lines gave")));
  if (outside.pairs > 0) {
    constexpr std::size_t names_up_to = 8;
    std::vector<std::string> named;
    for (std::size_t i = 0; i < outside.hosts.size() && i < names_up_to; ++i)
      named.push_back(fabric::printable_utf8(names[outside.hosts[i]]));
    if (outside.hosts.size() > names_up_to) named.push_back(fmt::format("and {} more", outside.hosts.size() - names_up_to));
    notes.push_back(fmt::format("{} {} outside the ranks' host lists ({}) {} skipped",
                                fabric::counted(outside.pairs, "pair"),
                                outside.hosts.size() == 1 ? "naming a host" : "naming hosts", fmt::join(named, ", "),
                                were(outside.pairs)));
  }
  if (auto missing = m.count(pair_state::missing); missing > 0)
    notes.push_back(fmt::format("{} of {} {} reported by neither side", missing, fabric::counted(m.planned(), "pair"),
                                were(missing)));
  if (auto unplanned = m.count(pair_state::unplanned); unplanned > 0)
    notes.push_back(fmt::format("{} of {} of the hosts {} not in the run's plan (--quick, --pairs) and {} not judged",
                                unplanned, fabric::counted(m.pairs.size(), "pair"), were(unplanned),
                                unplanned == 1 ? "is" : "are"));
  // Before the run's own (the MTUs'): what was read, then what it says.
  m.notes.insert(m.notes.begin(), std::make_move_iterator(notes.begin()), std::make_move_iterator(notes.end()));
}

matrix matrix_builder::finish(const line_counts& lines) {
  auto& s = *s_;
  // A check asked for that no pair line has, where others' lines came: a
  // matrix of its pairs would be every pair missing.
  if (s.asked && s.wanted_lines == 0 && !s.other_check_lines.empty()) {
    std::vector<std::string> others;
    for (const auto& [name, count] : s.other_check_lines)
      others.push_back(fmt::format("{} ({})", fabric::printable(name), count));
    auto asked = check_name(*s.only);
    fabric::cli::usage_error(fmt::format("--check {}: the input has no {} pair lines, only pair lines of {}", asked, asked,
                                         fmt::join(others, ", ")));
  }
  matrix m;
  m.check = s.only.value_or(check::ping);
  auto& run = s.keep_latest_run(m.run);
  auto joined = s.join_orphans(run, m.run);
  strangers outside;
  auto order = s.host_order(run, m.check == check::intra, outside);
  m.hosts.reserve(order.size());
  for (auto h : order) m.hosts.push_back(s.names[h]);
  s.final_words(run, order, m);
  s.take_run_facts(run, order, m);
  run = {};  // the records' memory, before the verdicts
  m.errors = std::move(s.errors);
  s.add_notes(m, lines, joined, outside);
  return m;
}

}  // namespace sweep
