// One line's word: the few fields of a sweep's line that the report uses,
// read with simdjson's DOM parser into views of its own buffers. Every
// field is checked for its type and range; a pair entry that fails is
// skipped and counted, the rest of the line still read.
#include "fabric-sweep/report/read/read.hpp"

#include "fabric/base/text.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace sweep {

namespace {

using simdjson::dom::element;
using simdjson::dom::object;

/// A line whose strings carry bytes that are not UTF-8 (a launcher or a
/// file that mangled them): each such byte as the text \xNN, as every
/// message quotes bytes, so that the line is read and its pair kept.
std::string with_bad_bytes_escaped(std::string_view line) {
  std::string out;
  out.reserve(line.size() + 16);
  while (!line.empty()) {
    if (auto n = fabric::utf8_sequence(line)) {
      out.append(line.substr(0, n));
      line.remove_prefix(n);
    } else {
      out += fmt::format("\\\\x{:02x}", static_cast<unsigned char>(line.front()));
      line.remove_prefix(1);
    }
  }
  return out;
}

/// The UTF-16 unit of the \uXXXX escape at `at` (its backslash), if any.
std::optional<unsigned> unicode_escape(std::string_view text, std::size_t at) {
  if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return std::nullopt;
  unsigned unit = 0;
  auto hex = text.substr(at + 2, 4);
  auto [end, ec] = std::from_chars(hex.data(), hex.data() + 4, unit, 16);
  if (ec != std::errc() || end != hex.data() + 4) return std::nullopt;
  return unit;
}

/// A line whose strings carry a UTF-16 surrogate escape without its other
/// half (a lone "\ud800", no character at all, for which simdjson refuses
/// the line): each such escape as the text it is, \ud800, as a byte that
/// is not UTF-8 becomes \xNN, so that the line is read and its pair kept.
/// Nothing when there is none.
std::optional<std::string> with_lone_surrogates_as_text(std::string_view line) {
  auto high = [](unsigned u) { return u >= 0xd800 && u <= 0xdbff; };
  auto low = [](unsigned u) { return u >= 0xdc00 && u <= 0xdfff; };
  std::string out;
  bool any = false;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] != '\\' || i + 1 == line.size()) {
      out += line[i++];
      continue;
    }
    auto unit = unicode_escape(line, i);
    if (!unit) {  // another escape: its two characters
      out.append(line.substr(i, 2));
      i += 2;
    } else if (auto next = unicode_escape(line, i + 6); high(*unit) && next && low(*next)) {
      out.append(line.substr(i, 12));
      i += 12;
    } else {
      if (high(*unit) || low(*unit)) {
        out += '\\';
        any = true;
      }
      out.append(line.substr(i, 6));
      i += 6;
    }
  }
  if (!any) return std::nullopt;
  return out;
}

/// Why a pair entry is skipped: a field of the wrong type or value, or a
/// host name longer than any host's.
struct malformed {};
struct long_name {};

/// A host's name: at most max_host_name_bytes.
bool host_name(std::string_view name) { return !name.empty() && name.size() <= max_host_name_bytes; }

std::optional<element> field(const object& o, std::string_view key) {
  element e;
  if (o.at_key(key).get(e) != simdjson::SUCCESS) return std::nullopt;
  return e;
}

std::string_view text(const object& o, std::string_view key, std::string_view absent = {}) {
  auto e = field(o, key);
  if (!e) return absent;
  std::string_view s;
  if (e->get_string().get(s) != simdjson::SUCCESS) throw malformed{};
  return s;
}

/// A string, or "" for null.
std::string_view text_or_null(const object& o, std::string_view key) {
  auto e = field(o, key);
  if (!e || e->is_null()) return {};
  std::string_view s;
  if (e->get_string().get(s) != simdjson::SUCCESS) throw malformed{};
  return s;
}

bool flag(const object& o, std::string_view key, std::optional<bool> absent) {
  auto e = field(o, key);
  if (!e) {
    if (!absent) throw malformed{};
    return *absent;
  }
  bool b = false;
  if (e->get_bool().get(b) != simdjson::SUCCESS) throw malformed{};
  return b;
}

/// The most a figure may be (a time in microseconds: 31 years; Gb/s;
/// seconds): beyond it a line lies, and sums of its squares would overflow.
constexpr double most_figure = 1e15;

/// A figure: a number from 0 to most_figure.
double number(const element& e) {
  double d = 0;
  if (e.get_double().get(d) != simdjson::SUCCESS || !(d >= 0 && d <= most_figure)) throw malformed{};
  return d;
}

double number(const object& o, std::string_view key, double absent) {
  auto e = field(o, key);
  return e ? number(*e) : absent;
}

/// A whole number from 0 to `most`.
std::uint64_t count(const element& e, std::uint64_t most) {
  std::uint64_t u = 0;
  if (e.get_uint64().get(u) != simdjson::SUCCESS || u > most) throw malformed{};
  return u;
}

std::uint32_t small_count(const object& o, std::string_view key, std::uint32_t absent) {
  auto e = field(o, key);
  return e ? static_cast<std::uint32_t>(count(*e, 1'000'000'000)) : absent;
}

/// The statistics of the common schema: count and the times, a time null
/// only without samples. A pair's median must be a number.
std::optional<fabric::latency_summary> latency_of(const object& pair) {
  auto e = field(pair, "latency");
  if (!e || e->is_null()) return std::nullopt;
  object o;
  if (e->get_object().get(o) != simdjson::SUCCESS) throw malformed{};
  fabric::latency_summary s;
  if (auto c = field(o, "count")) s.count = static_cast<std::size_t>(count(*c, std::numeric_limits<std::uint64_t>::max()));
  auto p50 = field(o, "p50_us");
  if (!p50) throw malformed{};
  s.p50 = number(*p50);
  for (auto [key, into] : {std::pair{"min_us", &s.min}, {"p99_us", &s.p99}, {"p999_us", &s.p999}, {"max_us", &s.max},
                           {"mean_us", &s.mean}, {"stdev_us", &s.stdev}}) {
    auto v = field(o, key);
    *into = !v || v->is_null() ? 0.0 : number(*v);
  }
  return s;
}

std::optional<direction_figures> direction_of(const object& bw, std::string_view key) {
  auto e = field(bw, key);
  if (!e || e->is_null()) return std::nullopt;
  object o;
  if (e->get_object().get(o) != simdjson::SUCCESS) throw malformed{};
  direction_figures d;
  auto bytes = field(o, "bytes"), gbps = field(o, "gbps");
  if (!gbps) throw malformed{};
  d.bytes = bytes ? count(*bytes, std::numeric_limits<std::uint64_t>::max()) : 0;
  d.seconds = field(o, "elapsed_us") ? number(o, "elapsed_us", 0) / 1e6 : number(o, "seconds", 0);  // earlier lines: seconds
  d.gbps = number(*gbps);
  if (d.gbps < 0 || d.seconds < 0) throw malformed{};
  return d;
}

std::optional<bandwidth_figures> bandwidth_of(const object& pair) {
  auto e = field(pair, "bandwidth");
  if (!e || e->is_null()) return std::nullopt;
  object o;
  if (e->get_object().get(o) != simdjson::SUCCESS) throw malformed{};
  bandwidth_figures b;
  b.client_to_server = direction_of(o, "client_to_server");
  b.server_to_client = direction_of(o, "server_to_client");
  return b;
}

/// A port GUID as the lines write it ("0x" and 16 hex digits), or null.
std::optional<std::uint64_t> guid_or_null(const object& o, std::string_view key) {
  auto g = text_or_null(o, key);
  if (g.empty()) return std::nullopt;
  std::uint64_t v = 0;
  auto digits = g.substr(std::min<std::size_t>(2, g.size()));
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, 16);
  if (!g.starts_with("0x") || digits.empty() || digits.size() > 16 || ec != std::errc() || end != digits.data() + digits.size())
    throw malformed{};
  return v;
}

/// A LID (1 to 0xFFFF), or null.
std::optional<std::uint16_t> lid_or_null(const object& o, std::string_view key) {
  auto e = field(o, key);
  if (!e || e->is_null()) return std::nullopt;
  auto lid = static_cast<std::uint16_t>(count(*e, 0xFFFF));
  if (lid == 0) return std::nullopt;  // no LID assigned
  return lid;
}

port_ids port_ids_of(const object& o) { return {guid_or_null(o, "port_guid"), lid_or_null(o, "lid")}; }

side_record side_of(const element& e) {
  object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) throw malformed{};
  side_record r;
  r.check = text(o, "check", "ping");
  r.server = text(o, "server");
  r.client = text(o, "client");
  r.server_rail = text_or_null(o, "server_rail");
  r.client_rail = text_or_null(o, "client_rail");
  // One side on a rail and the other on none says neither; one host meets
  // itself only from one of its rails to another (check intra).
  if (r.server_rail.empty() != r.client_rail.empty()) throw malformed{};
  bool itself = r.server == r.client;
  if (r.server.empty() || r.client.empty() || (itself && (r.check != "intra" || r.server_rail.empty() ||
                                                          r.server_rail == r.client_rail)))
    throw malformed{};
  if (!host_name(r.server) || !host_name(r.client)) throw long_name{};
  if (r.server_rail.size() > max_host_name_bytes || r.client_rail.size() > max_host_name_bytes) throw long_name{};
  auto side = text(o, "side", "client");
  if (side != "client" && side != "server") throw malformed{};
  r.client_side = side == "client";
  r.ok = flag(o, "ok", std::nullopt);
  r.error = text_or_null(o, "error");
  r.retest = flag(o, "retest", false);
  r.peer_absent = flag(o, "peer_absent", false);
  r.sweep = small_count(o, "sweep", 1);
  r.round = small_count(o, "round", 0);
  r.elapsed_us = number(o, "elapsed_us", 0);
  r.latency = latency_of(o);
  r.bandwidth = bandwidth_of(o);
  r.own_port = port_ids_of(o);
  return r;
}

/// A number within `range`, else nothing.
std::optional<double> number_within(const object& o, std::string_view key, option_range range) {
  auto e = field(o, key);
  double d = 0;
  if (!e || e->get_double().get(d) != simdjson::SUCCESS || !range.holds(d)) return std::nullopt;
  return d;
}

/// The verdict options a rank's document gives, each within the range its
/// option takes; nothing when one is not.
std::optional<verdict_options> verdict_of(const object& line) {
  object o;
  if (auto e = field(line, "options"); !e || e->get_object().get(o) != simdjson::SUCCESS) return std::nullopt;
  auto factor = number_within(o, "outlier_factor", outlier_factor_range);
  auto fraction = number_within(o, "bw_fraction", bw_fraction_range);
  auto expect = field(o, "expect_gbps");
  if (!factor || !fraction || !expect) return std::nullopt;
  verdict_options v;
  v.outlier_factor = *factor;
  v.bw_fraction = *fraction;
  if (!expect->is_null() && !(v.expect_gbps = number_within(o, "expect_gbps", expect_gbps_range))) return std::nullopt;
  // Lines of versions before them have neither.
  if (auto e = field(o, "expect_gbps_auto"); e && e->get_bool().get(v.expect_gbps_auto) != simdjson::SUCCESS)
    return std::nullopt;
  if (auto e = field(o, "expect_us"); e && !e->is_null() && !(v.expect_us = number_within(o, "expect_us", expect_us_range)))
    return std::nullopt;
  return v;
}

run_tag run_of(const object& o) {
  auto e = field(o, "run");
  if (!e) return {};
  std::string_view id;
  if (e->get_string().get(id) == simdjson::SUCCESS) return {run_tag::kind::named, id};
  return {run_tag::kind::null, {}};
}

}  // namespace

struct line_reader::state {
  simdjson::dom::parser parser;
  std::string buffer;  // the text, with simdjson's padding after it
  line_word word;

  void add_pair(const element& e) {
    try {
      word.pairs.push_back(side_of(e));
    } catch (const malformed&) {
      ++word.malformed;
    } catch (const long_name&) {
      ++word.long_names;
    }
  }
  void add_hosts(const element& e) {
    simdjson::dom::array list;
    if (e.get_array().get(list) != simdjson::SUCCESS) return;
    std::vector<std::string_view> hosts;
    for (auto h : list) {
      std::string_view name;
      if (h.get_string().get(name) != simdjson::SUCCESS || name.empty()) return;
      if (host_name(name)) hosts.push_back(name);
    }
    word.hosts = std::move(hosts);
  }
  /// A rank's peers when its rounds meet only some hosts (null: every other).
  void add_plan(const object& o) {
    auto peers = field(o, "peers");
    std::string_view self;
    simdjson::dom::array list;
    if (!peers || peers->is_null() || o["host"].get(self) != simdjson::SUCCESS || !host_name(self) ||
        peers->get_array().get(list) != simdjson::SUCCESS)
      return;
    std::vector<std::string_view> names;
    for (auto h : list) {
      std::string_view name;
      if (h.get_string().get(name) != simdjson::SUCCESS || name.empty() || name == self) return;
      if (host_name(name)) names.push_back(name);
    }
    word.plan_host = self;
    word.plan_peers = std::move(names);
  }
  /// A rank's port, with its host: its `adapter` (an MTU an RDMA port
  /// may have, a rate within reason, short words), else the MTU alone of
  /// older lines.
  void add_port(const object& o) {
    std::string_view self;
    if (o["host"].get(self) != simdjson::SUCCESS || !host_name(self)) return;
    auto mtu_of = [](const object& from) -> std::optional<std::uint32_t> {
      std::uint64_t mtu = 0;
      if (from["mtu"].get_uint64().get(mtu) != simdjson::SUCCESS || mtu < 256 || mtu > 65536) return std::nullopt;
      return static_cast<std::uint32_t>(mtu);
    };
    object adapter;
    if (auto e = field(o, "adapter"); e && e->get_object().get(adapter) == simdjson::SUCCESS) {
      port_rate p;
      std::string_view speed, link_layer;
      double rate = 0;
      if (adapter["speed"].get(speed) == simdjson::SUCCESS && speed.size() <= 16) p.speed = speed;
      if (adapter["link_layer"].get(link_layer) == simdjson::SUCCESS && link_layer.size() <= 16) p.link_layer = link_layer;
      if (auto r = field(adapter, "rate_gbps"); r && r->get_double().get(rate) == simdjson::SUCCESS &&
                                                 expect_gbps_range.holds(rate))
        p.rate_gbps = rate;
      p.mtu = mtu_of(adapter).value_or(0);
      word.port_host = self;
      word.port = std::move(p);
      // What finds the host on a fabric document; a word that is not one
      // leaves it to be found by name.
      try {
        word.port_in_subnet = port_ids_of(adapter);
      } catch (const malformed&) {
      }
      return;
    }
    if (auto mtu = mtu_of(o)) {
      word.port_host = self;
      word.port = port_rate{0, {}, {}, *mtu};
    }
  }
  static constexpr std::size_t most_rails_a_rank_names = 64;
  /// A rank's rails (--rails): each one's name and its adapter's device
  /// and port ids; a rail of another shape, or without its adapter, is
  /// left out (its host is then found by name, as without rails).
  void add_rail_ports(const object& o) {
    std::string_view self;
    simdjson::dom::array rails;
    if (o["host"].get(self) != simdjson::SUCCESS || !host_name(self)) return;
    if (auto e = field(o, "rails"); !e || e->get_array().get(rails) != simdjson::SUCCESS) return;
    word.rail_host = self;
    for (auto item : rails) {
      // A rank names 16 rails at most (--rails): the rest of a longer list is not a rank's.
      if (word.rail_ports.size() == most_rails_a_rank_names) break;
      object rail, adapter;
      std::string_view name, device;
      if (item.get_object().get(rail) != simdjson::SUCCESS || rail["name"].get(name) != simdjson::SUCCESS ||
          !host_name(name))
        continue;
      if (auto a = field(rail, "adapter"); !a || a->get_object().get(adapter) != simdjson::SUCCESS) continue;
      if (adapter["device"].get(device) != simdjson::SUCCESS || device.size() > max_host_name_bytes) device = {};
      try {
        word.rail_ports.push_back({name, device, port_ids_of(adapter)});
      } catch (const malformed&) {
        word.rail_ports.push_back({name, device, {}});
      }
    }
  }
  /// What a rank's --pairs file carried from its first run.
  void add_first_run(const object& o) {
    object carried;
    if (auto e = field(o, "first_run"); !e || e->get_object().get(carried) != simdjson::SUCCESS) return;
    word.first_run_us = number_within(carried, "bar_us", expect_us_range);
    word.first_run_gbps = number_within(carried, "bar_gbps", expect_gbps_range);
  }
  /// The run of an event's payload, else the line's own.
  void note_run(const object& payload, const object& line) {
    word.run = run_of(payload);
    if (word.run.is == run_tag::kind::absent) word.run = run_of(line);
  }
};

line_reader::line_reader() : s_(std::make_unique<state>()) {}
line_reader::~line_reader() = default;

const line_word& line_reader::read(std::string_view json) {
  auto& s = *s_;
  s.word.sweeps = false;
  s.word.run = {};
  s.word.time.reset();
  s.word.hosts.clear();
  s.word.sweep_us.reset();
  s.word.pairs.clear();
  s.word.plan_host = {};
  s.word.plan_peers.clear();
  s.word.port_host = {};
  s.word.port.reset();
  s.word.port_in_subnet = {};
  s.word.rail_host = {};
  s.word.rail_ports.clear();
  s.word.first_run_us.reset();
  s.word.first_run_gbps.reset();
  s.word.verdict.reset();
  s.word.malformed = 0;
  s.word.long_names = 0;
  s.word.lone_surrogates = false;
  s.buffer.assign(json);
  s.buffer.append(simdjson::SIMDJSON_PADDING, '\0');
  element root;
  auto parsed = s.parser.parse(s.buffer.data(), json.size(), false).get(root);
  if (parsed == simdjson::UTF8_ERROR) {
    s.buffer = with_bad_bytes_escaped(json);
    auto size = s.buffer.size();
    s.buffer.append(simdjson::SIMDJSON_PADDING, '\0');
    parsed = s.parser.parse(s.buffer.data(), size, false).get(root);
  }
  if (parsed == simdjson::STRING_ERROR) {
    if (auto mended = with_lone_surrogates_as_text(std::string_view(s.buffer.data(), s.buffer.size() - simdjson::SIMDJSON_PADDING))) {
      s.buffer = std::move(*mended);
      auto size = s.buffer.size();
      s.buffer.append(simdjson::SIMDJSON_PADDING, '\0');
      parsed = s.parser.parse(s.buffer.data(), size, false).get(root);
      s.word.lone_surrogates = parsed == simdjson::SUCCESS;
    }
  }
  if (parsed != simdjson::SUCCESS) return s.word;
  object line;
  if (root.get_object().get(line) != simdjson::SUCCESS) return s.word;
  std::string_view tool;
  if (line["tool"].get(tool) != simdjson::SUCCESS || tool != "fabric-sweep") return s.word;
  s.word.sweeps = true;
  if (auto t = field(line, "time")) {
    double d = 0;
    // Unix time up to the year 5000; any other is no time.
    if (t->get_double().get(d) == simdjson::SUCCESS && d >= 0 && d <= 95'000'000'000.0) s.word.time = d;
  }
  std::string_view event;
  if (line["event"].get(event) == simdjson::SUCCESS) {
    // Saved lines of earlier versions call the start event "sweep" and a
    // pair's event "pair": the report reads them as it did.
    bool started = event == "started" || event == "sweep";
    bool pair = event == "result" || event == "pair";
    auto payload = field(line, event);
    object o;
    if (!payload || payload->get_object().get(o) != simdjson::SUCCESS) {
      if (pair) ++s.word.malformed;
      return s.word;
    }
    s.note_run(o, line);
    if (started) {
      if (auto hosts = field(o, "hosts")) s.add_hosts(*hosts);
      s.add_plan(o);
      s.add_port(o);
      s.add_rail_ports(o);
      s.add_first_run(o);
    } else if (pair) {
      s.add_pair(*payload);
    }
    return s.word;
  }
  // A document: its summary and its pairs.
  object summary;
  if (auto e = field(line, "summary"); e && e->get_object().get(summary) == simdjson::SUCCESS) {
    s.note_run(summary, line);
    if (auto hosts = field(summary, "hosts")) s.add_hosts(*hosts);
    s.add_plan(summary);
    s.add_port(summary);
    s.add_rail_ports(summary);
    s.add_first_run(summary);
    if (auto elapsed = field(summary, "elapsed_us")) {
      double d = 0;
      if (elapsed->get_double().get(d) == simdjson::SUCCESS && d >= 0 && d <= most_figure) s.word.sweep_us = d;
    }
  }
  std::string_view role;
  // A report's own document has results of another shape: not a rank's word.
  if (line["role"].get(role) == simdjson::SUCCESS && role == "report") return s.word;
  s.word.verdict = verdict_of(line);
  simdjson::dom::array results;
  if (auto e = field(line, "results"); e && e->get_array().get(results) == simdjson::SUCCESS)
    for (auto item : results) {
      object o;
      std::string_view kind;
      if (item.get_object().get(o) != simdjson::SUCCESS || o["kind"].get(kind) != simdjson::SUCCESS || kind != "pair")
        continue;
      s.add_pair(item);
    }
  return s.word;
}

}  // namespace sweep
