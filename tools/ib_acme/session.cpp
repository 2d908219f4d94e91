// Talking to ACM services: path and address lookups (-d), counters (-P)
// and endpoints (-e), printed as the original prints them.
#include "session.hpp"

#include "fabric/cli/range.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <netdb.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace ib_acme {

using fabric::deadline;
using fabric::error;
using fabric::exit_code;
namespace acm = fabric::acm;

void hard_failure::note(const error& e) {
  if (code == exit_code::ok) {
    code = e.code();
    message = e.what();
  }
}

namespace {

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

class session {
public:
  session(const options& o, report& r, const printer& out) : opt_(o), rep_(r), out_(out) {}

  void run_services() {
    auto services = fabric::expand_range(opt_.service);
    for (const auto& svc : services) {
      service_result sr{svc, false, {}};
      std::optional<acm::client> c;
      try {
        c.emplace(acm::client::connect(svc, acm::service_port(opt_.port_file), until(), service_user_uid(opt_)));
        sr.connected = true;
        rep_.return_status = 0;
      } catch (const acm::connect_error& e) {
        sr.error = e.what();
        out_("{},unable to contact service: {}\n", fabric::printable(svc), std::strerror(e.err()));
        // The original returns the connect's errno for a unix socket, -1 over TCP.
        rep_.return_status = !svc.empty() && svc.front() == '/' ? e.err() : -1;
        hard_.note(e);
        add_service(sr);
        continue;
      }
      rep_.services.push_back(sr);
      try {
        if (!opt_.dest.empty()) rep_.return_status = resolve_all(*c, svc);
        if (opt_.perf != perf_mode::none) query_perf(*c, svc);
        if (opt_.endpoints) enumerate_endpoints(*c, svc);
      } catch (const error& e) {
        if (e.code() == exit_code::interrupted || e.code() == exit_code::output_closed) throw;
        hard_.note(e);
        rep_.services.back().error = e.what();
        rep_.return_status = -1;
      }
      out_.result(result_json(rep_.services.back(), rep_.services.size() - 1));
    }
  }

  void add_service(const service_result& sr) {
    rep_.services.push_back(sr);
    out_.result(result_json(rep_.services.back(), rep_.services.size() - 1));
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
    out_("Service: {}\n", fabric::printable(svc));
    for (const auto& d : dests) {
      auto [dest, format] = guess_dest(d, opt_.format);
      for (const auto& src : sources) {
        lookup l;
        l.service = svc;
        l.dest = dest;
        l.source = src;
        l.format = format;
        out_("Destination: {}\n", fabric::printable(dest));
        if (!src.empty()) out_("Source: {}\n", fabric::printable(src));
        try {
          ret = resolve_one(c, l);
        } catch (const error& e) {
          if (e.code() == exit_code::interrupted) throw;
          l.ok = false;
          l.error = e.what();
          out_("{} failed: {}\n", op_name(format), std::strerror(errno_for(e.code())));
          out_("\n");
          add_lookup(std::move(l));
          throw;
        }
        out_("\n");
        add_lookup(std::move(l));
      }
    }
    return ret;
  }

  void add_lookup(lookup l) {
    rep_.results.push_back(std::move(l));
    out_.result(result_json(rep_.results.back(), rep_.results.size() - 1));
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
          s = acm::ip_bytes(l.source);
          if (s.empty()) {
            out_("inet_pton error on source address ({}): 0x0\n", fabric::printable(l.source));
            l.error = "source is not an IP address";
            return false;
          }
        }
        auto d = acm::ip_bytes(l.dest);
        if (d.empty()) {
          out_("inet_pton error on destination address ({}): 0x0\n", fabric::printable(l.dest));
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
          out_("inet_pton error on source address ({}): 0x0\n", fabric::printable(l.source));
          l.error = "source is not a GID";
          return false;
        }
        if (inet_pton(AF_INET6, l.dest.c_str(), p.dgid.data()) <= 0) {
          out_("inet_pton error on dest address ({}): 0x0\n", fabric::printable(l.dest));
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
    bool timed = opt_.stats || opt_.out.mode() != fabric::output_mode::human;
    auto t_start = fabric::clock::now();
    bool all_ok = true;
    for (int i = 0; i < opt_.count; ++i) {
      fabric::throw_if_interrupted();
      auto t0 = fabric::clock::now();
      auto reply = c.resolve(entries, deadline::at(t0 + std::chrono::milliseconds(opt_.timeout_ms)));
      if (timed) {
        l.last_us = fabric::us_since(t0);
        l.times.add(l.last_us);
      }
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
        for (const auto& s : reply.sources) out_("Source: {}\n", fabric::printable(s.text()));
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
    if (opt_.stats && l.times.count() > 0)
      out_("Lookups: {} in {:.3f} s, {:.0f}/s, latency {}\n", l.times.count(), l.elapsed_s,
           l.elapsed_s > 0 ? static_cast<double>(l.times.count()) / l.elapsed_s : 0.0,
           fabric::format_summary(l.times.summary()));
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
        out_("{}: Failed to query perf data: {}\n", fabric::printable(svc), std::strerror(guess_errno));
        return false;
      };
      acm::endpoint e;
      if (type == 'i') {
        if (opt_.verbose) out_("query_perf_ip: src_addr {}\n", fabric::printable(src));
        auto b = acm::ip_bytes(src);
        if (b.empty()) {
          out_("inet_pton error on src address ({}): 0x0\n", fabric::printable(src));
          return local_failure();
        }
        e = acm::endpoint::address(b, acm::flag_source);
      } else if (type == 'n') {
        if (opt_.verbose) out_("query_perf_name: src_addr {}\n", fabric::printable(src));
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
        out_("{}: Failed to query perf data: {}\n", fabric::printable(svc), std::strerror(acm::status_errno(reply.status)));
        return false;
      }
    } else {
      reply = c.query_perf(static_cast<std::uint8_t>(index), until());
      which = index == 0 ? "all" : std::to_string(index);
      if (reply.status != 0) {
        if (opt_.perf != perf_mode::all)
          out_("{}: Failed to query perf data: {}\n", fabric::printable(svc), std::strerror(acm::status_errno(reply.status)));
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
      std::string row = fabric::printable(svc);
      for (auto x : v) row += fmt::format(",{}", x);
      out_("{}\n", row);
    } else {
      out_("{}\n", fabric::printable(svc));
      for (std::size_t i = 0; i < v.size(); ++i) out_("{} : {}\n", acm::counter_name(i), v[i]);
    }
    rep_.perf.push_back({svc, which, v});
    out_.result(result_json(rep_.perf.back(), rep_.perf.size() - 1));
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
      std::string row = fmt::format("{},0x{:016x},{},0x{:04x},{},{}", fabric::printable(svc), reply.dev_guid, reply.port_num, reply.pkey,
                                    index, fabric::printable(reply.prov_name));
      // Appended whole: "," + string made GCC 12's -O3 warn of an overlapping
      // memcpy (-Wrestrict) that cannot happen, failing Release builds.
      for (const auto& a : reply.addrs) row += fmt::format(",{}", fabric::printable(a));
      out_("{}\n", row);
      port_count = reply.phys_port_cnt;
      rep_.endpoints.push_back({svc, index, std::move(reply)});
      out_.result(result_json(rep_.endpoints.back(), rep_.endpoints.size() - 1));
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

}  // namespace

session_outcome query_services(const options& opt, report& r, const printer& out) {
  session s(opt, r, out);
  s.run_services();
  return {s.hard(), s.query_failed()};
}

}  // namespace ib_acme
