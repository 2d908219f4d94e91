#include "ib_acme.hpp"

#include "fabric/completion.hpp"
#include "fabric/range.hpp"
#include "fabric/wait.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>

namespace ib_acme {

using fabric::deadline;
using fabric::error;
using fabric::exit_code;
namespace acm = fabric::acm;

namespace {

/// -P's argument, read as the original does.
void parse_perf(const std::string& arg, options& opt) {
  auto starts = [&](std::string_view w) {
    return arg.size() >= 3 && strncasecmp(arg.c_str(), w.data(), 3) == 0;
  };
  if (arg.empty()) {
    opt.perf = perf_mode::row;
  } else if (starts("col")) {
    opt.perf = perf_mode::col;
  } else if (starts("all")) {
    opt.perf = perf_mode::all;
  } else if (arg == "s") {
    opt.perf = perf_mode::source;
  } else {
    int n = std::atoi(arg.c_str());
    opt.ep_index = n;
    opt.perf = n > 0 ? perf_mode::index : perf_mode::row;
  }
}

}  // namespace

void add_options(CLI::App& app, options& opt) {
  app.add_option_function<std::string>(
         "-f,--format",
         [&opt](const std::string& v) {
           char c = v.empty() ? '\0' : v[0];
           if (c != 'i' && c != 'n' && c != 'l' && c != 'g')
             throw CLI::ValidationError("-f", "address format must be i(p), n(ame), l(id) or g(id)");
           opt.format = c;
         },
         "Address format of -s and -d: i(p), n(ame), l(id), g(id); default: guess from each address")
      ->type_name("i|n|l|g");
  app.add_option("-s,--source", opt.source, "Source address(es) for path queries, range syntax node[1-3,5]")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_option("-d,--dest", opt.dest, "Destination address(es) for path queries, range syntax node[1-3,5]")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_flag("-v,--verify", opt.verify, "Verify each path with the SA: through the ACM service, and directly when a local InfiniBand port can ask it");
  app.add_flag("-c,--cache-only", opt.cache_only, "Answer from the ACM service's cache only");
  app.add_option_function<std::string>(
         "-e,--endpoints",
         [&opt](const std::string& v) {
           opt.endpoints = true;
           if (!v.empty()) opt.ep_index = std::atoi(v.c_str());
         },
         "List the service's endpoints: all, or endpoint N (1, 2, ...)")
      ->expected(0, 1)
      ->type_name("[N]");
  app.add_option_function<std::string>(
         "-P,--perf", [&opt](const std::string& v) { parse_perf(v, opt); },
         "Query performance counters: combined in a row (no value), col (combined, in a column), N (endpoint N), all (every endpoint), s (the endpoint of -s)")
      ->expected(0, 1)
      ->type_name("[col|N|all|s]");
  app.add_option("-S,--service", opt.service,
                 "ACM service(s): a unix socket path (starting with /) or a host reached over TCP; range syntax")
      ->capture_default_str();
  app.add_option_function<int>(
         "-C,--count", [&opt](int v) { opt.count = v == 0 ? 1 : v; }, "Repeat each resolution this many times")
      ->check(CLI::Range(0, 100'000'000));
  app.add_option_function<std::string>(
         "-A,--addr-file",
         [&opt](const std::string& v) {
           opt.make_addr = true;
           if (!v.empty()) opt.addr_file = v;
         },
         "Generate the address configuration file (default ibacm_addr.cfg) from the local devices")
      ->expected(0, 1)
      ->type_name("[FILE]");
  app.add_option_function<std::string>(
         "-O,--opts-file",
         [&opt](const std::string& v) {
           opt.make_opts = true;
           if (!v.empty()) opt.opts_file = v;
         },
         "Generate the options file (default ibacm_opts.cfg)")
      ->expected(0, 1)
      ->type_name("[FILE]");
  app.add_option("-D,--dir", opt.dir, "Directory of the generated files")
      ->type_name(std::string(fabric::completion::dir_type))
      ->capture_default_str();
  app.add_flag("-V,--verbose", opt.verbose, "Verbose output");
  app.add_flag("--stats", opt.stats, "Print lookups per second and a latency summary per destination");
  app.add_flag("--probe", opt.probe,
               "Probe which ibacm options can work here: ports, SA, sockets, service, installed providers");
  app.add_option("--provider-path", opt.provider_path, "Directory of ibacm provider libraries (--probe)")
      ->type_name(std::string(fabric::completion::dir_type))
      ->capture_default_str();
  app.add_option("--port-file", opt.port_file, "File holding the ACM service's TCP port (6125 when absent)")
      ->type_name(std::string(fabric::completion::file_type))
      ->capture_default_str();
  fabric::cli::add_timeout_option(app, opt.timeout_ms, "Milliseconds to wait for the service, each reply and the SA");
  // getopt lets a later option override an earlier one; scripts rely on it.
  for (auto* o : app.get_options())
    if (o->get_expected_max() == 1) o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

void validate(const options& opt) {
  bool any_action = !opt.dest.empty() || opt.perf != perf_mode::none || opt.make_addr || opt.make_opts ||
                    opt.endpoints || opt.probe;
  if ((!opt.source.empty() && opt.dest.empty() && opt.perf != perf_mode::source) ||
      (opt.perf == perf_mode::source && opt.source.empty()))
    throw error(exit_code::usage, "-s needs -d, or -P s");
  if (!any_action) throw error(exit_code::usage, "nothing to do: give -d, -P, -e, -A, -O or --probe");
  // Bad ranges are bad input, found before any service is asked.
  for (const auto* r : {&opt.dest, &opt.source, &opt.service})
    if (!r->empty()) fabric::expand_range(*r);
}

// ---- rendering -------------------------------------------------------------

std::string format_path(const acm::path_record& p) {
  std::string s = "Path information\n";
  s += fmt::format("  dgid: {}\n", acm::format_gid(p.dgid));
  s += fmt::format("  sgid: {}\n", acm::format_gid(p.sgid));
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

nlohmann::json path_json(const acm::path_record& p) {
  return {{"service_id", p.service_id},
          {"dgid", acm::format_gid(p.dgid)},
          {"sgid", acm::format_gid(p.sgid)},
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
          {"mtu", p.mtu},
          {"mtu_bytes", fabric::sa::mtu_bytes(p.mtu)},
          {"rate_selector", p.rate_selector},
          {"rate", p.rate},
          {"rate_gbps", fabric::sa::rate_gbps(p.rate)},
          {"packet_life_time_selector", p.packet_life_time_selector},
          {"packet_life_time", p.packet_life_time},
          {"preference", p.preference}};
}

std::vector<sa_check::mismatch> compare_paths(const acm::path_record& a, const acm::path_record& s) {
  std::vector<sa_check::mismatch> out;
  auto cmp = [&](const char* field, std::uint64_t x, std::uint64_t y) {
    if (x != y) out.push_back({field, x, y});
  };
  auto gid_hi = [](const std::array<std::uint8_t, 16>& g, int half) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | g[half * 8 + i];
    return v;
  };
  cmp("dgid_prefix", gid_hi(a.dgid, 0), gid_hi(s.dgid, 0));
  cmp("dgid_guid", gid_hi(a.dgid, 1), gid_hi(s.dgid, 1));
  cmp("sgid_prefix", gid_hi(a.sgid, 0), gid_hi(s.sgid, 0));
  cmp("sgid_guid", gid_hi(a.sgid, 1), gid_hi(s.sgid, 1));
  cmp("dlid", a.dlid, s.dlid);
  cmp("slid", a.slid, s.slid);
  cmp("flow_label", a.flow_label, s.flow_label);
  cmp("hop_limit", a.hop_limit, s.hop_limit);
  cmp("tclass", a.tclass, s.tclass);
  cmp("reversible", a.reversible, s.reversible);
  cmp("pkey", a.pkey, s.pkey);
  cmp("qos_class", a.qos_class, s.qos_class);
  cmp("sl", a.sl, s.sl);
  cmp("mtu", a.mtu, s.mtu);
  cmp("rate", a.rate, s.rate);
  cmp("packet_life_time", a.packet_life_time, s.packet_life_time);
  return out;
}

namespace {

std::string_view format_name(char f) {
  switch (f) {
    case 'i': return "ip";
    case 'n': return "name";
    case 'l': return "lid";
    case 'g': return "gid";
    default: return "unknown";
  }
}

nlohmann::json options_json(const options& o) {
  static constexpr std::string_view perf_names[] = {"none", "row", "col", "index", "all", "source"};
  nlohmann::json j{{"service", o.service},
                   {"verify", o.verify},
                   {"cache_only", o.cache_only},
                   {"count", o.count},
                   {"timeout", o.timeout_ms},
                   {"perf", perf_names[static_cast<int>(o.perf)]},
                   {"endpoints", o.endpoints},
                   {"dir", o.dir}};
  if (o.format != 'u') j["format"] = format_name(o.format);
  if (!o.dest.empty()) j["dest"] = o.dest;
  if (!o.source.empty()) j["source"] = o.source;
  if (o.ep_index > 0) j["ep_index"] = o.ep_index;
  if (o.make_addr) j["addr_file"] = o.addr_file;
  if (o.make_opts) j["opts_file"] = o.opts_file;
  return j;
}

nlohmann::json lookup_json(const lookup& l) {
  nlohmann::json j{{"service", l.service}, {"dest", l.dest}, {"format", format_name(l.format)}, {"ok", l.ok}};
  if (!l.source.empty()) j["source"] = l.source;
  if (!l.status.empty()) j["status"] = l.status;
  j["error"] = l.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.error);
  if (!l.source_used.empty()) j["source_used"] = l.source_used;
  if (l.path) j["path"] = path_json(*l.path);
  if (l.verified || l.sa) {
    nlohmann::json v;
    if (l.verified) {
      v["acm"] = *l.verified;
      if (!l.verify_error.empty()) v["acm_error"] = l.verify_error;
    }
    if (l.sa) {
      nlohmann::json s{{"checked", l.sa->checked}, {"match", l.sa->match()}};
      if (!l.sa->port.empty()) s["port"] = l.sa->port;
      if (!l.sa->reason.empty()) s["reason"] = l.sa->reason;
      if (l.sa->record) s["record"] = path_json(*l.sa->record);
      nlohmann::json mm = nlohmann::json::array();
      for (const auto& m : l.sa->mismatches) mm.push_back({{"field", m.field}, {"acm", m.acm}, {"sa", m.sa}});
      s["mismatches"] = std::move(mm);
      v["sa"] = std::move(s);
    }
    j["verify"] = std::move(v);
  }
  j["count"] = l.times_us.size();
  j["time_us"] = l.times_us.empty() ? 0.0 : l.times_us.back();
  if (l.times_us.size() > 1) {
    j["latency_us"] = fabric::summarize(l.times_us);
    if (l.elapsed_s > 0) j["lookups_per_sec"] = static_cast<double>(l.times_us.size()) / l.elapsed_s;
  }
  return j;
}

}  // namespace

void to_json(nlohmann::json& j, const report& r) {
  j["role"] = "client";
  j["options"] = options_json(r.opt);
  nlohmann::json services = nlohmann::json::array();
  for (const auto& s : r.services)
    services.push_back({{"service", s.service}, {"connected", s.connected},
                        {"error", s.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.error)}});
  j["services"] = std::move(services);
  nlohmann::json results = nlohmann::json::array();
  std::size_t failed = 0;
  for (const auto& l : r.results) {
    results.push_back(lookup_json(l));
    if (!l.ok) ++failed;
  }
  j["results"] = std::move(results);
  j["failed"] = failed;
  if (r.opt.perf != perf_mode::none) {
    nlohmann::json perf = nlohmann::json::array();
    for (const auto& p : r.perf) {
      nlohmann::json counters = nlohmann::json::object();
      for (std::size_t i = 0; i < p.counters.size(); ++i) counters[std::string(acm::counter_name(i))] = p.counters[i];
      perf.push_back({{"service", p.service}, {"endpoint", p.endpoint}, {"counters", std::move(counters)}});
    }
    j["perf"] = std::move(perf);
  }
  if (r.opt.endpoints) {
    nlohmann::json eps = nlohmann::json::array();
    for (const auto& e : r.endpoints)
      eps.push_back({{"service", e.service}, {"ep_index", e.ep_index}, {"guid", fmt::format("0x{:016x}", e.data.dev_guid)},
                     {"port", e.data.port_num}, {"phys_port_cnt", e.data.phys_port_cnt},
                     {"pkey", fmt::format("0x{:04x}", e.data.pkey)}, {"prov", e.data.prov_name},
                     {"addresses", e.data.addrs}});
    j["endpoints"] = std::move(eps);
  }
  if (!r.files.empty()) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : r.files) files.push_back({{"kind", f.kind}, {"path", f.path}});
    j["files"] = std::move(files);
  }
  if (r.probe) j["probe"] = *r.probe;
  j["return_status"] = r.return_status;
}

// ---- running -----------------------------------------------------------------

namespace {

/// Human output: the original's lines, on stdout, only without --json.
class printer {
public:
  explicit printer(bool json) : json_(json) {}
  template <class... Args>
  void operator()(fmt::format_string<Args...> f, Args&&... args) const {
    if (json_) return;
    fmt::print(f, std::forward<Args>(args)...);
  }
  void raw(const std::string& s) const {
    if (!json_) std::fwrite(s.data(), 1, s.size(), stdout);
  }

private:
  bool json_;
};

/// A hard failure (no answer, a malformed one) ends the session with a
/// service; remembered to become the exit code after the human output.
struct hard_failure {
  exit_code code = exit_code::ok;
  std::string message;
  void note(const error& e) {
    if (code == exit_code::ok) {
      code = e.code();
      message = e.what();
    }
  }
};

/// The errno the original would show for a failure of ours.
int errno_for(exit_code c) {
  switch (c) {
    case exit_code::protocol: return EPROTO;
    case exit_code::timeout: return ETIMEDOUT;
    case exit_code::connect_failed: return ECONNRESET;
    case exit_code::interrupted: return EINTR;
    default: return EIO;
  }
}

/// The original's guess for -f u: an IP literal, a resolvable host name
/// (replaced by its address), or else a LID.
std::pair<std::string, char> guess_dest(const std::string& arg, char format) {
  if (format != 'u') return {arg, format};
  unsigned char buf[16];
  if (inet_pton(AF_INET, arg.c_str(), buf) > 0 || inet_pton(AF_INET6, arg.c_str(), buf) > 0) return {arg, 'i'};
  addrinfo hint{};
  hint.ai_protocol = IPPROTO_TCP;
  addrinfo* res = nullptr;
  if (getaddrinfo(arg.c_str(), nullptr, &hint, &res) != 0) return {arg, 'l'};
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(res, &freeaddrinfo);
  char text[INET6_ADDRSTRLEN] = {};
  const void* a = res->ai_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr)
                                             : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_addr);
  if (inet_ntop(res->ai_family, a, text, sizeof text)) return {text, 'i'};
  return {arg, 'n'};
}

/// An IPv4 or IPv6 literal as the 4 or 16 bytes of an endpoint; empty if neither.
std::vector<std::uint8_t> ip_bytes(const std::string& text) {
  std::vector<std::uint8_t> b(16);
  if (inet_pton(AF_INET, text.c_str(), b.data()) > 0) {
    b.resize(4);
    return b;
  }
  if (inet_pton(AF_INET6, text.c_str(), b.data()) > 0) return b;
  return {};
}

class session {
public:
  session(const options& o, report& r, const printer& out) : opt_(o), rep_(r), out_(out) {}

  void run_services() {
    auto services = fabric::expand_range(opt_.service);
    for (const auto& svc : services) {
      service_result sr{svc, false, {}};
      std::optional<acm::client> c;
      try {
        c.emplace(acm::client::connect(svc, acm::service_port(opt_.port_file), until()));
        sr.connected = true;
        rep_.return_status = 0;
      } catch (const acm::connect_error& e) {
        sr.error = e.what();
        out_("{},unable to contact service: {}\n", svc, std::strerror(e.err()));
        // The original returns the connect's errno for a unix socket, -1 over TCP.
        rep_.return_status = !svc.empty() && svc.front() == '/' ? e.err() : -1;
        hard_.note(e);
        rep_.services.push_back(sr);
        continue;
      }
      rep_.services.push_back(sr);
      try {
        if (!opt_.dest.empty()) rep_.return_status = resolve_all(*c, svc);
        if (opt_.perf != perf_mode::none) query_perf(*c, svc);
        if (opt_.endpoints) enumerate_endpoints(*c, svc);
      } catch (const error& e) {
        if (e.code() == exit_code::interrupted) throw;
        hard_.note(e);
        rep_.services.back().error = e.what();
        rep_.return_status = -1;
      }
    }
  }

  [[nodiscard]] const hard_failure& hard() const { return hard_; }
  /// A -P or -e query that was asked for and failed.
  [[nodiscard]] bool query_failed() const { return query_failed_; }

private:
  [[nodiscard]] deadline until() const { return deadline::after(std::chrono::milliseconds(opt_.timeout_ms)); }

  std::uint32_t dest_flags() const { return acm::flag_dest | (opt_.cache_only ? acm::flag_nodelay : 0); }

  int resolve_all(acm::client& c, const std::string& svc) {
    auto dests = fabric::expand_range(opt_.dest);
    std::vector<std::string> sources;
    if (!opt_.source.empty()) sources = fabric::expand_range(opt_.source);
    if (sources.empty()) sources.emplace_back();
    int ret = -1;
    out_("Service: {}\n", svc);
    for (const auto& d : dests) {
      auto [dest, format] = guess_dest(d, opt_.format);
      for (const auto& src : sources) {
        lookup l;
        l.service = svc;
        l.dest = dest;
        l.source = src;
        l.format = format;
        out_("Destination: {}\n", dest);
        if (!src.empty()) out_("Source: {}\n", src);
        try {
          ret = resolve_one(c, l);
        } catch (const error& e) {
          if (e.code() == exit_code::interrupted) throw;
          l.ok = false;
          l.error = e.what();
          out_("{} failed: {}\n", op_name(format), std::strerror(errno_for(e.code())));
          out_("\n");
          rep_.results.push_back(std::move(l));
          throw;
        }
        out_("\n");
        rep_.results.push_back(std::move(l));
      }
    }
    return ret;
  }

  static std::string_view op_name(char format) {
    switch (format) {
      case 'i': return "ib_acm_resolve_ip";
      case 'n': return "ib_acm_resolve_name";
      default: return "ib_acm_resolve_path";
    }
  }

  /// Builds the request's entries; prints the original's complaint and
  /// returns false for an address it cannot parse.
  bool build_request(lookup& l, std::vector<acm::endpoint>& entries) {
    auto fl = dest_flags();
    switch (l.format) {
      case 'i': {
        std::vector<std::uint8_t> s;
        if (!l.source.empty()) {
          s = ip_bytes(l.source);
          if (s.empty()) {
            out_("inet_pton error on source address ({}): 0x0\n", l.source);
            l.error = "source is not an IP address";
            return false;
          }
        }
        auto d = ip_bytes(l.dest);
        if (d.empty()) {
          out_("inet_pton error on destination address ({}): 0x0\n", l.dest);
          l.error = "destination is not an IP address";
          return false;
        }
        if (!s.empty() && s.size() != d.size()) {
          out_("source and destination address families don't match\n");
          l.error = "source and destination address families differ";
          return false;
        }
        if (!s.empty()) entries.push_back(acm::endpoint::address(s, acm::flag_source));
        entries.push_back(acm::endpoint::address(d, fl));
        return true;
      }
      case 'n':
        try {
          if (!l.source.empty()) entries.push_back(acm::endpoint::name(l.source, acm::flag_source));
          entries.push_back(acm::endpoint::name(l.dest, fl));
        } catch (const std::length_error&) {
          out_("{} failed: {}\n", op_name('n'), std::strerror(EINVAL));
          l.error = "name longer than 63 characters";
          return false;
        }
        return true;
      case 'l': {
        acm::path_record p;
        if (!l.source.empty()) p.slid = static_cast<std::uint16_t>(std::atoi(l.source.c_str()));
        p.dlid = static_cast<std::uint16_t>(std::atoi(l.dest.c_str()));
        p.reversible = true;
        p.numb_path = 1;
        entries.push_back(acm::endpoint::path(p, fl & ~acm::flag_dest));
        return true;
      }
      case 'g': {
        acm::path_record p;
        if (!l.source.empty() && inet_pton(AF_INET6, l.source.c_str(), p.sgid.data()) <= 0) {
          out_("inet_pton error on source address ({}): 0x0\n", l.source);
          l.error = "source is not a GID";
          return false;
        }
        if (inet_pton(AF_INET6, l.dest.c_str(), p.dgid.data()) <= 0) {
          out_("inet_pton error on dest address ({}): 0x0\n", l.dest);
          l.error = "destination is not a GID";
          return false;
        }
        p.reversible = true;
        p.numb_path = 1;
        entries.push_back(acm::endpoint::path(p, fl & ~acm::flag_dest));
        return true;
      }
      default:
        return false;
    }
  }

  int resolve_one(acm::client& c, lookup& l) {
    std::vector<acm::endpoint> entries;
    if (!build_request(l, entries)) {
      // The original repeats the failing parse, and its complaint, each time.
      for (int i = 1; i < opt_.count; ++i) {
        entries.clear();
        build_request(l, entries);
      }
      return -1;
    }
    int ret = -1;
    acm::resolve_reply last;
    // Lookup times are taken only when reported: a clock read can be a
    // system call (HPET), and each lookup's deadline needs one already.
    bool timed = opt_.stats || opt_.out.json;
    if (timed) l.times_us.reserve(static_cast<std::size_t>(opt_.count));
    auto t_start = fabric::clock::now();
    bool all_ok = true;
    for (int i = 0; i < opt_.count; ++i) {
      fabric::throw_if_interrupted();
      auto t0 = fabric::clock::now();
      auto reply = c.resolve(entries, deadline::at(t0 + std::chrono::milliseconds(opt_.timeout_ms)));
      if (timed) l.times_us.push_back(fabric::us_since(t0));
      if (reply.status != 0) {
        out_("{} failed: {}\n", op_name(l.format), std::strerror(acm::status_errno(reply.status)));
        l.status = acm::status_name(reply.status);
        l.error = fmt::format("ACM status {}", l.status);
        all_ok = false;
        ret = -1;
        continue;
      }
      // The original prints the source the service chose on a single lookup.
      if (opt_.count == 1 && (l.format == 'i' || l.format == 'n'))
        for (const auto& s : reply.sources) out_("Source: {}\n", s.text());
      last = std::move(reply);
      ret = 0;
    }
    if (ret == 0) {
      // Decoded once: a -C run measures the service, not this tool.
      l.status = acm::status_name(last.status);
      for (const auto& s : last.sources) l.source_used = s.text();
      l.path = last.paths.front().as_path();
    }
    l.elapsed_s = fabric::ms_since(t_start) / 1000.0;
    if (ret == 0) {
      l.error.clear();
      out_.raw(format_path(*l.path));
      if (opt_.verify) ret = verify(c, l);
    }
    l.ok = ret == 0 && all_ok;
    if (!all_ok && l.error.empty()) l.error = "a repetition failed";
    if (opt_.stats && l.times_us.size() > 0)
      out_("Lookups: {} in {:.3f} s, {:.0f}/s, latency {}\n", l.times_us.size(), l.elapsed_s,
           l.elapsed_s > 0 ? static_cast<double>(l.times_us.size()) / l.elapsed_s : 0.0,
           fabric::format_summary(fabric::summarize(l.times_us)));
    return ret;
  }

  int verify(acm::client& c, lookup& l) {
    acm::endpoint e = acm::endpoint::path(*l.path, acm::flag_query_sa);
    auto reply = c.resolve(std::span(&e, 1), until());
    int ret = 0;
    if (reply.status != 0) {
      l.verified = false;
      l.verify_error = acm::status_name(reply.status);
      l.error = fmt::format("SA verification through the service: {}", l.verify_error);
      out_("SA verification: failed {}\n", std::strerror(acm::status_errno(reply.status)));
      ret = -1;
    } else {
      l.verified = true;
      out_("SA verification: success\n");
    }
    l.sa = direct_sa_check(*l.path);
    if (l.sa->checked) {
      if (l.sa->match()) {
        out_("SA path record: match ({})\n", l.sa->port);
      } else if (!l.sa->record) {
        out_("SA path record: no answer ({}): {}\n", l.sa->port, l.sa->reason);
        if (ret == 0) l.error = "SA: " + l.sa->reason;
        ret = -1;
      } else {
        std::string diffs;
        for (const auto& m : l.sa->mismatches) diffs += fmt::format(" {} acm {} sa {};", m.field, m.acm, m.sa);
        if (!diffs.empty()) diffs.pop_back();
        out_("SA path record: mismatch ({}):{}\n", l.sa->port, diffs);
        if (ret == 0) l.error = "the SA's path record differs from the service's";
        ret = -1;
      }
    }
    return ret;
  }

  sa_check direct_sa_check(const acm::path_record& p) {
    sa_check check;
    if (!ports_) ports_ = fabric::sa::list_ports();
    const fabric::sa::port_info* chosen = nullptr;
    for (const auto& port : *ports_)
      if (port.infiniband() && port.gid() == p.sgid) chosen = &port;
    if (!chosen)
      for (const auto& port : *ports_)
        if (port.infiniband() && port.state == 4) {
          chosen = &port;
          break;
        }
    if (!chosen) {
      check.reason = ports_->empty() ? "no umad port on this host" : "no active InfiniBand port";
      return check;
    }
    check.port = fmt::format("{}/{}", chosen->ca, chosen->port);
    auto answer = fabric::sa::query_path(*chosen, p, std::chrono::milliseconds(opt_.timeout_ms));
    if (!answer.answered && answer.error.rfind("open", 0) == 0) {
      check.reason = answer.error;  // could not even ask: not a verdict
      return check;
    }
    check.checked = true;
    if (!answer.record) {
      check.reason = answer.error;
      return check;
    }
    check.record = answer.record;
    check.mismatches = compare_paths(p, *answer.record);
    return check;
  }

  // ---- -P ------------------------------------------------------------------

  bool perf_one(acm::client& c, const std::string& svc, int index) {
    acm::perf_reply reply;
    std::string which;
    if (opt_.perf == perf_mode::source) {
      errno = 0;
      auto [src, type] = guess_dest(opt_.source, opt_.format);
      // A source that cannot be asked for fails locally; the original then
      // reports whatever errno the guess left behind.
      int guess_errno = errno != 0 ? errno : ENOENT;
      auto local_failure = [&] {
        out_("{}: Failed to query perf data: {}\n", svc, std::strerror(guess_errno));
        return false;
      };
      acm::endpoint e;
      if (type == 'i') {
        if (opt_.verbose) out_("query_perf_ip: src_addr {}\n", src);
        auto b = ip_bytes(src);
        if (b.empty()) {
          out_("inet_pton error on src address ({}): 0x0\n", src);
          return local_failure();
        }
        e = acm::endpoint::address(b, acm::flag_source);
      } else if (type == 'n') {
        if (opt_.verbose) out_("query_perf_name: src_addr {}\n", src);
        try {
          e = acm::endpoint::name(src, acm::flag_source);
        } catch (const std::length_error&) {
          return local_failure();
        }
      } else {
        out_("Unsupported src_type {}\n", static_cast<int>(type));
        return local_failure();
      }
      reply = c.query_perf(e, until());
      which = src;
      if (reply.status != 0) {
        out_("ib_acm_query_perf failed: {}\n", std::strerror(acm::status_errno(reply.status)));
        out_("{}: Failed to query perf data: {}\n", svc, std::strerror(acm::status_errno(reply.status)));
        return false;
      }
    } else {
      reply = c.query_perf(static_cast<std::uint8_t>(index), until());
      which = index == 0 ? "all" : std::to_string(index);
      if (reply.status != 0) {
        if (opt_.perf != perf_mode::all)
          out_("{}: Failed to query perf data: {}\n", svc, std::strerror(acm::status_errno(reply.status)));
        return false;
      }
    }
    const auto& v = reply.counters;
    if (opt_.perf != perf_mode::col) {
      if (!perf_labels_) {
        std::string labels = "svc";
        for (std::size_t i = 0; i < v.size(); ++i) labels += fmt::format(",{}", acm::counter_name(i));
        out_("{}\n", labels);
        perf_labels_ = true;
      }
      std::string row = svc;
      for (auto x : v) row += fmt::format(",{}", x);
      out_("{}\n", row);
    } else {
      out_("{}\n", svc);
      for (std::size_t i = 0; i < v.size(); ++i) out_("{} : {}\n", acm::counter_name(i), v[i]);
    }
    rep_.perf.push_back({svc, which, v});
    return true;
  }

  void query_perf(acm::client& c, const std::string& svc) {
    if (opt_.perf != perf_mode::all) {
      if (!perf_one(c, svc, opt_.ep_index)) query_failed_ = true;
      return;
    }
    // Endpoint indexes are one byte on the wire.
    for (int index = 1; index <= 255 && perf_one(c, svc, index); ++index) {
    }
  }

  // ---- -e -----------------------------------------------------------------

  bool enumerate_one(acm::client& c, const std::string& svc, int index) {
    int port_count = 255;
    bool found = false;
    for (int port = 1; port <= port_count; ++port) {
      auto reply = c.query_ep(static_cast<std::uint8_t>(index), static_cast<std::uint8_t>(port), until());
      if (reply.status != 0) continue;
      found = true;
      if (!ep_labels_) {
        out_("svc,guid,port,pkey,ep_index,prov,addr_0,addresses\n");
        ep_labels_ = true;
      }
      std::string row = fmt::format("{},0x{:016x},{},0x{:04x},{},{}", svc, reply.dev_guid, reply.port_num, reply.pkey,
                                    index, reply.prov_name);
      for (const auto& a : reply.addrs) row += "," + a;
      out_("{}\n", row);
      port_count = reply.phys_port_cnt;
      rep_.endpoints.push_back({svc, index, std::move(reply)});
    }
    return found;
  }

  void enumerate_endpoints(acm::client& c, const std::string& svc) {
    if (opt_.ep_index > 0) {
      if (!enumerate_one(c, svc, opt_.ep_index)) {
        out_(" Endpoint {} is not available\n", opt_.ep_index);
        query_failed_ = true;
      }
      return;
    }
    for (int index = 1; index <= 255 && enumerate_one(c, svc, index); ++index) {
    }
  }

  const options& opt_;
  report& rep_;
  const printer& out_;
  hard_failure hard_;
  bool perf_labels_ = false;
  bool query_failed_ = false;
  bool ep_labels_ = false;
  std::optional<std::vector<fabric::sa::port_info>> ports_;
};

/// -A / -O; prints the original's lines; returns the original's status.
int generate(const options& opt, report& r, const printer& out, hard_failure& hard) {
  auto attempt = [&](const char* kind, const std::string& name, auto&& make_text, const char* failure) {
    if (opt.verbose) out("Generating {}/{}\n", opt.dir, name);
    try {
      auto path = write_config(opt.dir, name, make_text());
      r.files.push_back({kind, path});
      return 0;
    } catch (const error& e) {
      if (e.code() == exit_code::no_device) {
        out("ibv_get_device_list - no devices present?\n");
      } else {
        out("{}: {}\n", failure, e.what());
      }
      hard.note(e);
      return -1;
    }
  };
  int ret = 0;
  if (opt.make_addr)
    ret = attempt("addr", opt.addr_file, [&] {
      char host[256] = {};
      if (gethostname(host, sizeof host - 1) != 0) fabric::throw_errno(errno, "gethostname");
      auto text = addr_file_text(host, list_local_ports());
      if (opt.verbose) {
        // The original echoes the generated entries.
        auto body = text.substr(text.rfind("# node31-2"));
        out("{}", body.substr(body.find('\n') + 1));
      }
      return text;
    }, "Failed to open address configuration file");
  if (ret == 0 && opt.make_opts)
    ret = attempt("opts", opt.opts_file, [] { return opts_file_text(); }, "Failed to open option configuration file");
  return ret;
}

}  // namespace

fabric::exit_code run(const options& opt, report& r) {
  validate(opt);
  r.opt = opt;
  printer out(opt.out.json);
  session s(opt, r, out);
  hard_failure gen_failure;
  int ret = 0;
  if (!opt.dest.empty() || opt.perf != perf_mode::none || opt.endpoints) {
    r.return_status = -1;
    s.run_services();
    ret = r.return_status;
  }
  if (ret == 0 && (opt.make_addr || opt.make_opts)) {
    ret = generate(opt, r, out, gen_failure);
    r.return_status = ret;
  }
  if (opt.probe) {
    r.probe = probe(opt);
    out.raw(format_probe(*r.probe));
  }
  bool probe_only = opt.probe && opt.dest.empty() && opt.perf == perf_mode::none && !opt.endpoints &&
                    !opt.make_addr && !opt.make_opts;
  if (!probe_only && (opt.verbose || !(opt.make_addr || opt.make_opts) || ret != 0))
    out("return status 0x{:x}\n", static_cast<std::uint32_t>(ret));
  std::fflush(stdout);

  const auto& hard = s.hard().code != exit_code::ok ? s.hard() : gen_failure;
  if (hard.code != exit_code::ok) throw error(hard.code, hard.message);
  for (const auto& l : r.results)
    if (!l.ok) return exit_code::test_failed;
  if (ret != 0 || s.query_failed()) return exit_code::test_failed;
  return exit_code::ok;
}

}  // namespace ib_acme
