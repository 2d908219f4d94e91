// Performance counters (-P), printed as the original prints them.
#include "counters.hpp"

#include "guess.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ib_acme {

namespace acm = fabric::acm;

bool counters::query_one(acm::client& c, const std::string& svc, int index) {
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
    reply = c.query_perf(e, opt_.timeout.next());
    which = src;
    if (reply.status != 0) {
      out_("ib_acm_query_perf failed: {}\n", std::strerror(acm::status_errno(reply.status)));
      out_("{}: Failed to query perf data: {}\n", fabric::printable(svc), std::strerror(acm::status_errno(reply.status)));
      return false;
    }
  } else {
    reply = c.query_perf(static_cast<std::uint8_t>(index), opt_.timeout.next());
    which = index == 0 ? "all" : std::to_string(index);
    if (reply.status != 0) {
      if (opt_.perf != perf_mode::all)
        out_("{}: Failed to query perf data: {}\n", fabric::printable(svc), std::strerror(acm::status_errno(reply.status)));
      return false;
    }
  }
  const auto& v = reply.counters;
  if (opt_.perf != perf_mode::col) {
    if (!labels_) {
      std::string labels = "svc";
      for (std::size_t i = 0; i < v.size(); ++i) labels += fmt::format(",{}", acm::counter_name(i));
      out_("{}\n", labels);
      labels_ = true;
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

void counters::query(acm::client& c, const std::string& svc) {
  if (opt_.perf != perf_mode::all) {
    if (!query_one(c, svc, opt_.ep_index)) failed_ = true;
    return;
  }
  // Endpoint indexes are one byte on the wire.
  for (int index = 1; index <= 255 && query_one(c, svc, index); ++index) {
  }
}

}  // namespace ib_acme
