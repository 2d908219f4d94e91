// The fabric document, written with nlohmann/json a node at a time and
// read with simdjson's DOM parser: a 2,000-host fat tree's document (some
// ten megabytes, most of it forwarding tables) is read in a fraction of a
// second.
#include "document.hpp"

#include "fabric/base/error.hpp"
#include "fabric/base/socket.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/cli/console.hpp"
#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <set>
#include <system_error>

namespace sweep::subnet {

using ::fabric::exit_code;

namespace {

nlohmann::json words_json(const std::vector<std::string_view>& words) {
  auto out = nlohmann::json::array();
  for (auto w : words) out.push_back(w);
  return out;
}

nlohmann::json one_word(std::vector<std::string_view> words) {
  return words.size() == 1 ? nlohmann::json(words.front()) : nlohmann::json(nullptr);
}

nlohmann::json counters_json(const std::optional<port_counters>& c) {
  if (!c) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const auto& info : counter_table) out[std::string(info.key)] = ::fabric::value_or_null(c->get(info.id));
  out["extended"] = c->extended;
  return out;
}

nlohmann::json port_json(const port& p) {
  nlohmann::json peer = nullptr;
  if (p.peer) peer = {{"node_guid", guid_text(p.peer->node_guid)}, {"port", p.peer->port}};
  return {{"port", p.number},
          {"port_guid", guid_text(p.guid)},
          {"lid", p.lid},
          {"lmc", p.lmc},
          {"state", port_state_name(p.state)},
          {"physical_state", physical_state_name(p.physical_state)},
          {"width", one_word(width_words(p.width))},
          {"widths_enabled", words_json(width_words(p.widths_enabled))},
          {"widths_supported", words_json(width_words(p.widths_supported))},
          {"speed", one_word(speed_words(p.speed))},
          {"speeds_enabled", words_json(speed_words(p.speeds_enabled))},
          {"speeds_supported", words_json(speed_words(p.speeds_supported))},
          {"remote", std::move(peer)},
          {"counters", counters_json(p.counters)}};
}

}  // namespace

nlohmann::json node_json(const node& n, std::size_t index) {
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& p : n.ports) ports.push_back(port_json(p));
  nlohmann::json lft = nullptr;
  if (n.type == node_type::switch_node) {
    lft = nlohmann::json::array();
    for (auto out : n.lft) lft.push_back(out == no_port ? nlohmann::json(nullptr) : nlohmann::json(out));
  }
  return {{"kind", "node"},
          {"index", index},
          {"ok", n.error.empty()},
          {"error", ::fabric::text_or_null(n.error)},
          {"node_guid", guid_text(n.guid)},
          {"type", type_name(n.type)},
          {"description", n.description},
          {"port_count", n.port_count},
          {"lft", std::move(lft)},
          {"ports", std::move(ports)}};
}

nlohmann::json summary_json(const fabric& f) {
  std::size_t by_type[4] = {};
  for (const auto& n : f.nodes) ++by_type[static_cast<std::size_t>(n.type) & 3U];
  index at(f);
  nlohmann::json silent = nlohmann::json::array();
  for (const auto& s : f.silent)
    silent.push_back({{"node_guid", guid_text(s.node_guid)}, {"port", s.port}, {"error", s.error}});
  return {{"taken_at", f.taken_at},
          {"device", ::fabric::text_or_null(f.device)},
          {"port", f.port == 0 ? nlohmann::json(nullptr) : nlohmann::json(f.port)},
          {"from_node_guid", f.from_node_guid == 0 ? nlohmann::json(nullptr) : nlohmann::json(guid_text(f.from_node_guid))},
          {"from_lid", f.from_lid == 0 ? nlohmann::json(nullptr) : nlohmann::json(f.from_lid)},
          {"nodes", f.nodes.size()},
          {"switches", by_type[static_cast<std::size_t>(node_type::switch_node)]},
          {"channel_adapters", by_type[static_cast<std::size_t>(node_type::ca)]},
          {"routers", by_type[static_cast<std::size_t>(node_type::router)]},
          {"links", at.links().size()},
          {"counters_read", f.counters},
          {"unanswered", std::move(silent)}};
}

std::string document_text(nlohmann::json head, const fabric& f) {
  head["schema"] = document_schema;
  head["role"] = "discover";
  head["summary"] = summary_json(f);
  head["results"] = nlohmann::json::array();
  auto text = ::fabric::dump_json(head);
  // The nodes go in one at a time: never the whole fabric as one JSON value.
  static constexpr std::string_view slot = "\"results\":[]";
  auto at = text.find(slot);
  std::string out = text.substr(0, at + slot.size() - 1);
  for (std::size_t i = 0; i < f.nodes.size(); ++i) {
    if (i > 0) out += ',';
    out += ::fabric::dump_json(node_json(f.nodes[i], i));
  }
  out.append(text, at + slot.size() - 1);
  out += '\n';
  return out;
}

// ---- reading ---------------------------------------------------------------

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

/// The path of the value being read, for the one error line.
struct bad_field {
  std::string what;
};

/// Reads typed fields and says where a wrong one is.
class reader {
public:
  explicit reader(std::vector<std::string>& notes) : notes_(notes) {}

  void note(std::string text) {
    if (notes_.size() < max_notes) notes_.push_back(std::move(text));
    else ++dropped_;
  }
  [[nodiscard]] std::size_t dropped() const noexcept { return dropped_; }

  static element at(const object& o, std::string_view key, const std::string& where) {
    element e;
    if (o.at_key(key).get(e) != simdjson::SUCCESS) throw bad_field{fmt::format("{}{}: missing", where, key)};
    return e;
  }
  static object object_at(const object& o, std::string_view key, const std::string& where) {
    object out;
    if (at(o, key, where).get_object().get(out) != simdjson::SUCCESS)
      throw bad_field{fmt::format("{}{}: not an object", where, key)};
    return out;
  }
  static std::optional<array> array_or_null(const object& o, std::string_view key, const std::string& where) {
    auto e = at(o, key, where);
    if (e.is_null()) return std::nullopt;
    array out;
    if (e.get_array().get(out) != simdjson::SUCCESS) throw bad_field{fmt::format("{}{}: not an array", where, key)};
    return out;
  }
  static std::string_view text(const element& e, const std::string& where, std::string_view key) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) throw bad_field{fmt::format("{}{}: not a string", where, key)};
    return s;
  }
  static std::string_view text(const object& o, std::string_view key, const std::string& where) {
    return text(at(o, key, where), where, key);
  }
  static std::optional<std::string_view> text_or_null(const object& o, std::string_view key, const std::string& where) {
    auto e = at(o, key, where);
    if (e.is_null()) return std::nullopt;
    return text(e, where, key);
  }
  static std::uint64_t whole(const element& e, std::uint64_t most, const std::string& where, std::string_view key) {
    std::uint64_t v = 0;
    if (e.get_uint64().get(v) != simdjson::SUCCESS || v > most)
      throw bad_field{fmt::format("{}{}: not a whole number 0-{}", where, key, most)};
    return v;
  }
  static std::uint64_t whole(const object& o, std::string_view key, std::uint64_t most, const std::string& where) {
    return whole(at(o, key, where), most, where, key);
  }
  static std::optional<std::uint64_t> whole_or_null(const object& o, std::string_view key, std::uint64_t most,
                                                    const std::string& where) {
    auto e = at(o, key, where);
    if (e.is_null()) return std::nullopt;
    return whole(e, most, where, key);
  }
  static std::uint64_t guid(const object& o, std::string_view key, const std::string& where) {
    auto g = guid_of(text(o, key, where));
    if (!g) throw bad_field{fmt::format("{}{}: not a GUID (0x and 16 hex digits)", where, key)};
    return *g;
  }
  static bool flag(const object& o, std::string_view key, const std::string& where) {
    bool b = false;
    if (at(o, key, where).get_bool().get(b) != simdjson::SUCCESS) throw bad_field{fmt::format("{}{}: not true or false", where, key)};
    return b;
  }
  template <class Of>
  static std::uint8_t word_in(std::string_view w, const std::string& where, std::string_view key, Of of) {
    auto v = of(w);
    if (!v) throw bad_field{fmt::format("{}{}: '{}' is not one of its words", where, key, ::fabric::printable(w.substr(0, 40)))};
    return *v;
  }
  template <class Of>
  static std::uint8_t word(const object& o, std::string_view key, const std::string& where, Of of) {
    return word_in(text(o, key, where), where, key, of);
  }
  template <class Of>
  static std::uint8_t word_or_null(const object& o, std::string_view key, const std::string& where, Of of) {
    auto e = at(o, key, where);
    return e.is_null() ? std::uint8_t{0} : word_in(text(e, where, key), where, key, of);
  }
  template <class Of>
  static std::uint8_t mask(const object& o, std::string_view key, const std::string& where, Of of) {
    auto a = array_or_null(o, key, where);
    if (!a) throw bad_field{fmt::format("{}{}: not an array", where, key)};
    std::uint8_t out = 0;
    for (auto e : *a) out = static_cast<std::uint8_t>(out | word_in(text(e, where, key), where, key, of));
    return out;
  }

private:
  std::vector<std::string>& notes_;
  std::size_t dropped_ = 0;
};

port_counters counters_of(const object& o, const std::string& where) {
  port_counters c;
  for (const auto& info : counter_table)
    if (auto v = reader::whole_or_null(o, info.key, std::numeric_limits<std::uint64_t>::max(), where)) c.set(info.id, *v);
  c.extended = reader::flag(o, "extended", where);
  return c;
}

port port_of(const object& o, const std::string& where) {
  port p;
  p.number = static_cast<std::uint8_t>(reader::whole(o, "port", 254, where));
  p.guid = reader::guid(o, "port_guid", where);
  p.lid = static_cast<std::uint16_t>(reader::whole(o, "lid", 0xFFFF, where));
  p.lmc = static_cast<std::uint8_t>(reader::whole(o, "lmc", 7, where));
  p.state = reader::word(o, "state", where, [](std::string_view w) {
    return w == "unknown" ? std::optional<std::uint8_t>(0) : port_state_of(w);
  });
  p.physical_state = reader::word(o, "physical_state", where, [](std::string_view w) {
    return w == "unknown" ? std::optional<std::uint8_t>(0) : physical_state_of(w);
  });
  p.width = reader::word_or_null(o, "width", where, width_bit);
  p.widths_enabled = reader::mask(o, "widths_enabled", where, width_bit);
  p.widths_supported = reader::mask(o, "widths_supported", where, width_bit);
  p.speed = reader::word_or_null(o, "speed", where, speed_bit);
  p.speeds_enabled = reader::mask(o, "speeds_enabled", where, speed_bit);
  p.speeds_supported = reader::mask(o, "speeds_supported", where, speed_bit);
  auto remote = reader::at(o, "remote", where);
  if (!remote.is_null()) {
    object r;
    if (remote.get_object().get(r) != simdjson::SUCCESS) throw bad_field{where + "remote: not an object"};
    auto in = where + "remote.";
    p.peer = peer_ref{reader::guid(r, "node_guid", in), static_cast<std::uint8_t>(reader::whole(r, "port", 254, in))};
  }
  auto counters = reader::at(o, "counters", where);
  if (!counters.is_null()) {
    object c;
    if (counters.get_object().get(c) != simdjson::SUCCESS) throw bad_field{where + "counters: not an object"};
    p.counters = counters_of(c, where + "counters.");
  }
  return p;
}

node node_of(const object& o, const std::string& where, reader& r) {
  node n;
  if (reader::text(o, "kind", where) != "node") throw bad_field{where + "kind: not \"node\""};
  n.guid = reader::guid(o, "node_guid", where);
  n.type = static_cast<node_type>(reader::word(o, "type", where, [](std::string_view w) -> std::optional<std::uint8_t> {
    auto t = type_of(w);
    if (!t) return std::nullopt;
    return static_cast<std::uint8_t>(*t);
  }));
  auto description = reader::text(o, "description", where);
  if (description.size() > max_description_bytes) {
    r.note(fmt::format("node {}: a description of {} bytes, cut to {}", guid_text(n.guid), description.size(),
                       max_description_bytes));
    description = description.substr(0, max_description_bytes);
  }
  n.description = std::string(description);
  n.port_count = static_cast<std::uint8_t>(reader::whole(o, "port_count", 254, where));
  if (auto e = reader::text_or_null(o, "error", where)) n.error = ::fabric::shortened(std::string(*e), 1024);
  if (auto ports = reader::array_or_null(o, "ports", where)) {
    std::size_t i = 0;
    for (auto e : *ports) {
      auto in = fmt::format("{}ports[{}].", where, i++);
      object po;
      if (e.get_object().get(po) != simdjson::SUCCESS) throw bad_field{in.substr(0, in.size() - 1) + ": not an object"};
      auto p = port_of(po, in);
      if (p.number > n.port_count) {
        r.note(fmt::format("node {}: port {} beyond its {} ports, left out", guid_text(n.guid), p.number, n.port_count));
        continue;
      }
      if (p.lid > 0xBFFF) {
        r.note(fmt::format("node {} port {}: LID {} is not a unicast LID, taken as none", guid_text(n.guid), p.number, p.lid));
        p.lid = 0;
      }
      n.ports.push_back(std::move(p));
    }
  }
  std::sort(n.ports.begin(), n.ports.end(), [](const port& a, const port& b) { return a.number < b.number; });
  auto twice = std::adjacent_find(n.ports.begin(), n.ports.end(),
                                  [](const port& a, const port& b) { return a.number == b.number; });
  if (twice != n.ports.end()) {
    r.note(fmt::format("node {}: port {} given twice, the first kept", guid_text(n.guid), twice->number));
    n.ports.erase(std::unique(n.ports.begin(), n.ports.end(),
                              [](const port& a, const port& b) { return a.number == b.number; }),
                  n.ports.end());
  }
  if (auto lft = reader::array_or_null(o, "lft", where)) {
    if (n.type != node_type::switch_node) throw bad_field{where + "lft: a table of a node that is not a switch"};
    std::size_t beyond = 0, i = 0;
    for (auto e : *lft) {
      if (i++ == max_lft) {
        r.note(fmt::format("node {}: a forwarding table longer than {} LIDs, cut", guid_text(n.guid), max_lft));
        break;
      }
      if (e.is_null()) {
        n.lft.push_back(no_port);
        continue;
      }
      auto out = reader::whole(e, 255, where, "lft");
      if (out > n.port_count && out != no_port) {
        ++beyond;
        out = no_port;
      }
      n.lft.push_back(static_cast<std::uint8_t>(out));
    }
    if (beyond > 0)
      r.note(fmt::format("node {}: {} forwarding table entries beyond its {} ports, taken as none", guid_text(n.guid),
                         beyond, n.port_count));
  }
  return n;
}

/// Drops a link one end of which does not name the other back: a port
/// linked to itself, to a node or port the document lacks, or to a port
/// linked elsewhere.
void check_links(fabric& f, reader& r) {
  index at(f);
  std::size_t dropped = 0;
  std::string first;
  for (auto& n : f.nodes)
    for (auto& p : n.ports) {
      if (!p.peer) continue;
      auto j = at.node_of(p.peer->node_guid);
      const port* q = j ? f.nodes[*j].find_port(p.peer->port) : nullptr;
      bool agrees = q != nullptr && q->peer && q->peer->node_guid == n.guid && q->peer->port == p.number &&
                    !(p.peer->node_guid == n.guid && p.peer->port == p.number);
      if (agrees) continue;
      if (dropped++ == 0) first = port_name(n, p.number);
      p.peer.reset();
    }
  if (dropped > 0)
    r.note(fmt::format("{} link end{} whose far end does not name it back (first: {}), left out", dropped,
                       dropped == 1 ? "" : "s", first));
}

std::string what_simdjson_said(simdjson::error_code e) {
  switch (e) {
    case simdjson::UTF8_ERROR: return "not UTF-8";
    case simdjson::TAPE_ERROR:
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT: return "not whole JSON (cut short?)";
    case simdjson::EMPTY: return "empty";
    case simdjson::DEPTH_ERROR: return "nested too deep";
    default: return fmt::format("not JSON ({})", simdjson::error_message(e));
  }
}

}  // namespace

reading read_document(std::string_view text) {
  if (text.size() > max_document_bytes)
    throw ::fabric::error(exit_code::usage, fmt::format("a fabric document of more than {} MiB", max_document_bytes >> 20));
  reading out;
  reader r(out.notes);
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  element root;
  if (auto e = parser.parse(padded).get(root); e != simdjson::SUCCESS)
    throw ::fabric::error(exit_code::usage, fmt::format("not a fabric document: {}", what_simdjson_said(e)));
  try {
    object doc;
    if (root.get_object().get(doc) != simdjson::SUCCESS) throw bad_field{"the document: not an object"};
    auto schema = reader::text(doc, "schema", "");
    if (schema != document_schema)
      throw ::fabric::error(exit_code::usage,
                            fmt::format("not a fabric document: its schema is '{}', not {}",
                                        ::fabric::printable(schema.substr(0, 80)), document_schema));
    auto summary = reader::object_at(doc, "summary", "");
    auto results = reader::array_or_null(doc, "results", "");
    if (!results) throw bad_field{"results: not an array"};
    if (results->size() == 0) {
      auto error = reader::text_or_null(doc, "error", "");
      throw ::fabric::error(exit_code::usage, error ? fmt::format("a fabric document without nodes: its walk failed: {}",
                                                                   ::fabric::printable(::fabric::shortened(std::string(*error), 200)))
                                                    : std::string("a fabric document without nodes"));
    }
    auto& f = out.model;
    auto s = std::string("summary.");
    f.taken_at = [&] {
      double t = 0;
      if (reader::at(summary, "taken_at", s).get_double().get(t) != simdjson::SUCCESS || !(t >= 0 && t < 1e11))
        throw bad_field{"summary.taken_at: not a time"};
      return t;
    }();
    if (auto d = reader::text_or_null(summary, "device", s)) f.device = std::string(d->substr(0, 64));
    f.port = static_cast<std::uint8_t>(reader::whole_or_null(summary, "port", 254, s).value_or(0));
    if (!reader::at(summary, "from_node_guid", s).is_null()) f.from_node_guid = reader::guid(summary, "from_node_guid", s);
    f.from_lid = static_cast<std::uint16_t>(reader::whole_or_null(summary, "from_lid", 0xFFFF, s).value_or(0));
    f.counters = reader::flag(summary, "counters_read", s);
    if (auto silent = reader::array_or_null(summary, "unanswered", s)) {
      std::size_t i = 0;
      for (auto e : *silent) {
        auto in = fmt::format("summary.unanswered[{}].", i++);
        object o;
        if (e.get_object().get(o) != simdjson::SUCCESS) throw bad_field{in + ": not an object"};
        f.silent.push_back({reader::guid(o, "node_guid", in), static_cast<std::uint8_t>(reader::whole(o, "port", 254, in)),
                            ::fabric::shortened(std::string(reader::text(o, "error", in)), 200)});
      }
    }
    std::set<std::uint64_t> seen;
    std::size_t i = 0, twice = 0;
    for (auto e : *results) {
      auto where = fmt::format("results[{}].", i++);
      object o;
      if (e.get_object().get(o) != simdjson::SUCCESS) throw bad_field{where + ": not an object"};
      auto n = node_of(o, where, r);
      if (!seen.insert(n.guid).second) {
        if (twice++ == 0) r.note(fmt::format("node {} given twice, the first kept", guid_text(n.guid)));
        continue;
      }
      f.nodes.push_back(std::move(n));
    }
    if (twice > 1) r.note(fmt::format("{} nodes given twice in all", twice));
    check_links(f, r);
  } catch (const bad_field& b) {
    throw ::fabric::error(exit_code::usage, fmt::format("not a fabric document: {}", b.what));
  }
  if (r.dropped() > 0) out.notes.push_back(fmt::format("and {} more notes", r.dropped()));
  return out;
}

reading read_document_fd(int fd, const std::string& name) {
  auto shown = ::fabric::printable(name);
  // A pipe (--fabric <(zcat ...)) is read as a file is: wait for its bytes.
  if (int flags = ::fcntl(fd, F_GETFL); flags >= 0 && (flags & O_NONBLOCK) != 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    auto got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) {
      ::fabric::throw_if_interrupted();
      continue;
    }
    if (got < 0) throw ::fabric::error(exit_code::usage, fmt::format("{}: cannot be read: {}", shown, std::strerror(errno)));
    if (got == 0) break;
    text.append(buf, static_cast<std::size_t>(got));
    if (text.size() > max_document_bytes)
      throw ::fabric::error(exit_code::usage, fmt::format("{}: a fabric document of more than {} MiB", shown, max_document_bytes >> 20));
  }
  try {
    return read_document(text);
  } catch (const ::fabric::error& e) {
    throw ::fabric::error(e.code(), fmt::format("{}: {}", shown, e.what()));
  }
}

reading read_document_file(const std::string& path) {
  ::fabric::unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw ::fabric::error(exit_code::usage, fmt::format("{}: {}", ::fabric::printable(path), std::strerror(errno)));
  return read_document_fd(fd.get(), path);
}

}  // namespace sweep::subnet
