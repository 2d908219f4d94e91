// The report's renderings: the original's path block, and the JSON items
// and summary. No I/O here.
#include "ib_acme.hpp"

#include "fabric/base/sockaddr.hpp"
#include "fabric/cli/fields.hpp"
#include "fabric/cli/json_values.hpp"
#include "fabric/verbs/ports.hpp"

#include <fmt/format.h>

namespace ib_acme {

using fabric::text_or_null;

namespace acm = fabric::acm;

std::string format_path(const acm::path_record& p) {
  std::string s = "Path information\n";
  s += fmt::format("  dgid: {}\n", fabric::format_gid(p.dgid));
  s += fmt::format("  sgid: {}\n", fabric::format_gid(p.sgid));
  s += fmt::format("  dlid: {}\n", p.dlid);
  s += fmt::format("  slid: {}\n", p.slid);
  s += fmt::format("  flow label: 0x{:x}\n", (p.raw_traffic ? 1u << 23 : 0u) | p.flow_label);
  s += fmt::format("  hop limit: {}\n", p.hop_limit);
  s += fmt::format("  tclass: {}\n", p.tclass);
  s += fmt::format("  reversible: {}\n", p.reversible ? 1 : 0);
  s += fmt::format("  pkey: 0x{:x}\n", p.pkey);
  s += fmt::format("  sl: {}\n", p.sl);
  // The original masks these with 0x1f, dropping the selector and the top bit.
  s += fmt::format("  mtu: {}\n", p.mtu & 0x1f);
  s += fmt::format("  rate: {}\n", p.rate & 0x1f);
  s += fmt::format("  packet lifetime: {}\n", p.packet_life_time & 0x1f);
  return s;
}

std::string format_guid(std::uint64_t v) { return fmt::format("0x{:016x}", v); }

std::string sa_check::where() const { return fmt::format("{}/{}", device, port); }

nlohmann::json path_json(const acm::path_record& p) {
  // 64 bits: hex text, as a GUID (a larger integer loses digits in JS and jq).
  return {{"service_id", format_guid(p.service_id)},
          {"dgid", fabric::format_gid(p.dgid)},
          {"sgid", fabric::format_gid(p.sgid)},
          {"dlid", p.dlid},
          {"slid", p.slid},
          {"raw_traffic", p.raw_traffic},
          {"flow_label", p.flow_label},
          {"hop_limit", p.hop_limit},
          {"tclass", p.tclass},
          {"reversible", p.reversible},
          {"numb_path", p.numb_path},
          {"pkey", p.pkey},
          {"qos_class", p.qos_class},
          {"sl", p.sl},
          {"mtu_selector", p.mtu_selector},
          {"mtu_code", p.mtu},
          {"mtu", fabric::mtu_bytes(p.mtu)},
          {"rate_selector", p.rate_selector},
          {"rate_code", p.rate},
          {"rate_gbps", fabric::rate_gbps(p.rate)},
          {"packet_life_time_selector", p.packet_life_time_selector},
          {"packet_life_time", p.packet_life_time},
          {"preference", p.preference}};
}

std::vector<sa_check::mismatch> compare_paths(const acm::path_record& a, const acm::path_record& s) {
  std::vector<sa_check::mismatch> out;
  auto cmp = [&](const char* field, std::uint64_t x, std::uint64_t y, bool wide = false) {
    if (x != y) out.push_back({field, x, y, wide});
  };
  auto gid_hi = [](const std::array<std::uint8_t, 16>& g, int half) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | g[half * 8 + i];
    return v;
  };
  cmp("dgid_prefix", gid_hi(a.dgid, 0), gid_hi(s.dgid, 0), true);
  cmp("dgid_guid", gid_hi(a.dgid, 1), gid_hi(s.dgid, 1), true);
  cmp("sgid_prefix", gid_hi(a.sgid, 0), gid_hi(s.sgid, 0), true);
  cmp("sgid_guid", gid_hi(a.sgid, 1), gid_hi(s.sgid, 1), true);
  cmp("dlid", a.dlid, s.dlid);
  cmp("slid", a.slid, s.slid);
  cmp("flow_label", a.flow_label, s.flow_label);
  cmp("hop_limit", a.hop_limit, s.hop_limit);
  cmp("tclass", a.tclass, s.tclass);
  cmp("reversible", a.reversible, s.reversible);
  cmp("pkey", a.pkey, s.pkey);
  cmp("qos_class", a.qos_class, s.qos_class);
  cmp("sl", a.sl, s.sl);
  // Named as the path's keys: the codes, not the bytes and Gb/s.
  cmp("mtu_code", a.mtu, s.mtu);
  cmp("rate_code", a.rate, s.rate);
  cmp("packet_life_time", a.packet_life_time, s.packet_life_time);
  return out;
}

namespace {

using fabric::cli::field;
constexpr field count{"count", "{}"};
constexpr field rate{"lookups_per_second", "{:.0f}/s"};
constexpr field latency{"latency", "latency {}"};
constexpr field last{"time_us", "last {:.2f} us"};

std::optional<double> per_second(std::size_t n, double seconds) {
  if (seconds > 0 && n > 0) return static_cast<double>(n) / seconds;
  return std::nullopt;
}

/// A lookup's repetitions, each figure with its words: its result's, and its --stats line.
fabric::cli::fields lookup_fields(const lookup& l) {
  fabric::cli::fields f;
  f.line("Lookups: ")
      .put(count, l.times.count())
      .say(fmt::format("in {:.3f} s", l.elapsed_s), " ")
      .put(rate, per_second(l.times.count(), l.elapsed_s))
      .put(latency, l.times)
      .put(last, l.last_us, false);
  return f;
}

nlohmann::json item(std::string_view kind, std::size_t index, bool ok, const std::string& error) {
  return {{"kind", kind}, {"index", index}, {"ok", ok}, {"error", ok ? nlohmann::json(nullptr) : nlohmann::json(error.empty() ? std::string("failed") : error)}};
}
}  // namespace

nlohmann::json result_json(const lookup& l, std::size_t index) {
  auto j = item("lookup", index, l.ok, l.error);
  j["service"] = l.service;
  j["dest"] = l.dest;
  j["source"] = text_or_null(l.source);
  j["format"] = format_name(l.format);
  j["status"] = text_or_null(l.status);
  j["source_used"] = text_or_null(l.source_used);
  j["path"] = l.path ? path_json(*l.path) : nlohmann::json(nullptr);
  nlohmann::json v;  // null without -v
  if (l.verified || l.sa) {
    v = {{"acm", fabric::value_or_null(l.verified)},
         {"acm_error", text_or_null(l.verify_error)},
         {"sa", nullptr}};
    if (l.sa) {
      nlohmann::json mm = nlohmann::json::array();
      auto value = [](const sa_check::mismatch& m, std::uint64_t x) {
        return m.wide ? nlohmann::json(format_guid(x)) : nlohmann::json(x);
      };
      for (const auto& m : l.sa->mismatches)
        mm.push_back({{"field", m.field}, {"acm_value", value(m, m.acm)}, {"sa_value", value(m, m.sa)}});
      bool asked = !l.sa->device.empty();
      v["sa"] = {{"checked", l.sa->checked},
                 {"match", l.sa->match()},
                 {"device", asked ? nlohmann::json(l.sa->device) : nlohmann::json(nullptr)},
                 {"port", asked ? nlohmann::json(l.sa->port) : nlohmann::json(nullptr)},
                 {"reason", text_or_null(l.sa->reason)},
                 {"record", l.sa->record ? path_json(*l.sa->record) : nlohmann::json(nullptr)},
                 {"mismatches", std::move(mm)}};
    }
  }
  j["verification"] = std::move(v);
  j.update(lookup_fields(l).json());
  return j;
}

std::string format_lookup_stats(const lookup& l) { return lookup_fields(l).lines().front(); }

nlohmann::json result_json(const service_result& s, std::size_t index) {
  auto j = item("service", index, s.connected && s.error.empty(), s.error);
  j["service"] = s.service;
  j["reached"] = s.connected;
  return j;
}

nlohmann::json result_json(const perf_result& p, std::size_t index) {
  auto j = item("counters", index, true, {});
  nlohmann::json counters = nlohmann::json::object();
  for (std::size_t i = 0; i < p.counters.size(); ++i) counters[acm::counter_key(i)] = p.counters[i];
  j["service"] = p.service;
  j["endpoint"] = p.endpoint;
  j["counters"] = std::move(counters);
  return j;
}

nlohmann::json result_json(const endpoint_result& e, std::size_t index) {
  auto j = item("endpoint", index, true, {});
  j["service"] = e.service;
  j["ep_index"] = e.ep_index;
  j["guid"] = format_guid(e.data.dev_guid);
  j["port"] = e.data.port_num;
  j["phys_port_cnt"] = e.data.phys_port_cnt;
  j["pkey"] = e.data.pkey;
  j["prov"] = e.data.prov_name;
  j["addresses"] = e.data.addrs;
  return j;
}

nlohmann::json result_json(const file_result& f, std::size_t index) {
  auto j = item("file", index, true, {});
  j["file"] = f.kind;
  j["file_path"] = f.path;
  return j;
}

nlohmann::json check_json(const nlohmann::json& verdict, std::size_t index) {
  bool usable = verdict.value("usable", false);
  auto j = item("check", index, usable, verdict.value("why", std::string()));
  for (const char* key : {"option", "value", "usable", "why", "suggested"})
    j[key] = verdict.contains(key) ? verdict[key] : nlohmann::json(nullptr);
  return j;
}

void to_json(nlohmann::json& j, const options& o, const report& r) {
  j["role"] = "client";
  j["options"] = options_json(o);
  auto& results = j["results"] = nlohmann::json::array();
  auto add = [&](const auto& items) {
    for (std::size_t i = 0; i < items.size(); ++i) results.push_back(result_json(items[i], i));
  };
  add(r.services);
  add(r.results);
  add(r.perf);
  add(r.endpoints);
  add(r.files);
  fabric::latency_stats all;
  double elapsed_s = 0;
  for (const auto& l : r.results) {
    all.merge(l.times);
    elapsed_s += l.elapsed_s;
  }
  nlohmann::json probe_facts;  // null without --probe
  if (r.probe) {
    const auto& checks = (*r.probe)["options"];
    for (std::size_t i = 0; i < checks.size(); ++i) results.push_back(check_json(checks[i], i));
    probe_facts = *r.probe;
    probe_facts.erase("options");  // the checks: results, above
  }
  std::size_t failed = 0;
  for (const auto& item : results)
    if (!item["ok"].get<bool>()) ++failed;
  // The original's output has no summary of ours: every value is the
  // document's alone, declared as the lookups' are.
  fabric::cli::fields f;
  f.put(field{"lookups", "{} lookups"}, r.results.size(), false)
      .put(field{"failed", "{} failed"}, failed, false)
      .put(latency, all, false)
      .put(rate, per_second(all.count(), elapsed_s), false)
      .put(field{"return_status", "{}"}, r.return_status, false);
  j["summary"] = f.json();
  j["summary"]["probe_facts"] = std::move(probe_facts);
}

}  // namespace ib_acme
