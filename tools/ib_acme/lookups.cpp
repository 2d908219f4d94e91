// Path and address lookups (-d), printed as the original prints them.
#include "lookups.hpp"

#include "guess.hpp"

#include "fabric/cli/range.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <arpa/inet.h>

namespace ib_acme {

using fabric::error;
using fabric::exit_code;
namespace acm = fabric::acm;

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

}  // namespace

std::uint32_t lookups::dest_flags() const { return acm::flag_dest | (opt_.cache_only ? acm::flag_nodelay : 0); }

int lookups::resolve_all(acm::client& c, const std::string& svc) {
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
        l.ok = false;
        l.error = e.what();
        if (!e.ends_run()) {
          out_("{} failed: {}\n", op_name(format), std::strerror(errno_for(e.code())));
          out_("\n");
        }
        // Ended by Ctrl-C too, the lookup is reported with the repetitions it made.
        add_lookup(std::move(l));
        throw;
      }
      out_("\n");
      add_lookup(std::move(l));
    }
  }
  return ret;
}

void lookups::add_lookup(lookup l) {
  rep_.results.push_back(std::move(l));
  out_.result(result_json(rep_.results.back(), rep_.results.size() - 1));
}

std::string_view lookups::op_name(char format) {
  switch (format) {
    case 'i': return "ib_acm_resolve_ip";
    case 'n': return "ib_acm_resolve_name";
    default: return "ib_acm_resolve_path";
  }
}

/// Builds the request's entries; prints the original's complaint and
/// returns false for an address it cannot parse.
bool lookups::build_request(lookup& l, std::vector<acm::endpoint>& entries) {
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

int lookups::resolve_one(acm::client& c, lookup& l) {
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
    auto reply = c.resolve(entries, opt_.timeout.next_from(t0));
    if (timed) {
      l.last_us = fabric::us_since(t0);
      l.times.add(*l.last_us);
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
    if (opt_.verify) ret = verifier_.verify(c, l);
  }
  l.ok = ret == 0 && all_ok;
  if (!all_ok && l.error.empty()) l.error = "a repetition failed";
  if (opt_.stats && l.times.count() > 0) out_.raw(format_lookup_stats(l));
  return ret;
}

}  // namespace ib_acme
