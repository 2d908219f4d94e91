// What one pair does for each --check: the flows of lib/common, one side each.
#include "sweep.hpp"

#include "fabric/acm.hpp"
#include "fabric/console.hpp"
#include "fabric/group_exchange.hpp"
#include "fabric/rc_bandwidth.hpp"
#include "fabric/rc_connect.hpp"
#include "fabric/rc_ping.hpp"
#include "fabric/ud_ping.hpp"

#include <fmt/format.h>

#include <array>

namespace sweep {

namespace {

struct check_words {
  check c;
  std::string_view name, measure;
};
constexpr std::array<check_words, 6> words{{{check::ping, "ping", "round-trip time"},
                                            {check::connect, "connect", "connection setup time"},
                                            {check::ud, "ud", "UD round-trip time"},
                                            {check::acm, "acm", "ACM lookup time"},
                                            {check::multicast, "multicast", "multicast delivery"},
                                            {check::bw, "bw", "RDMA WRITE bandwidth"}}};

/// `count` lookups of `peer` through the ACM service, each timed.
void look_up(const run_options& r, const std::string& peer, std::uint64_t count, const fabric::deadline& until,
             pair_result& out) {
  namespace acm = fabric::acm;
  auto bytes = acm::ip_bytes(peer);
  if (bytes.empty())
    throw fabric::error(fabric::exit_code::usage, fmt::format("--check acm looks up IP addresses; {} is not one",
                                                              fabric::printable(peer)));
  const std::vector<acm::endpoint> request{acm::endpoint::address(bytes, acm::flag_dest)};
  auto service = acm::client::connect(r.acm_service, acm::service_port(), until);
  fabric::latency_stats took;
  out.lookups = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    auto t0 = fabric::clock::now();
    auto reply = service.resolve(request, until);
    if (reply.status != 0)
      throw fabric::error(fabric::exit_code::resolve_failed,
                          fmt::format("ACM lookup of {}: {}", peer, acm::status_name(reply.status)));
    took.add(fabric::us_since(t0));
    ++*out.lookups;
  }
  out.latency = took.summary();
}

}  // namespace

std::string_view check_name(check c) noexcept { return words[static_cast<std::size_t>(c)].name; }
std::string_view check_measure(check c) noexcept { return words[static_cast<std::size_t>(c)].measure; }

std::optional<check> check_of(std::string_view name) noexcept {
  for (const auto& w : words)
    if (w.name == name) return w.c;
  return std::nullopt;
}

std::optional<int> pair_count(const run_options& r) {
  if (r.count || r.check != check::bw) return r.count.value_or(100);
  return std::nullopt;
}

std::optional<double> lower_gbps(const pair_result& p) {
  std::optional<double> low;
  for (const auto& way : {p.client_to_server, p.server_to_client})
    if (way) low = std::min(low.value_or(way->gbps()), way->gbps());
  return low;
}

int pair_size(const run_options& r) { return r.size.value_or(r.check == check::bw ? 1 << 20 : 64); }

std::optional<int> pair_duration(const run_options& r) {
  if (r.check != check::bw || r.count) return std::nullopt;
  return r.duration_ms.value_or(1000);
}

void run_check(const run_options& r, bool serving, const std::string& peer_addr, int port,
               const fabric::pair_bounds& bounds, pair_result& out) {
  // The server listens on every address (the rule names how peers reach
  // it, which need not be how it sees itself); the client dials the rule's.
  std::string addr = serving ? std::string() : peer_addr;
  auto count = static_cast<std::uint64_t>(pair_count(r).value_or(0));
  auto size = static_cast<std::uint32_t>(pair_size(r));
  switch (r.check) {
    case check::ping: {
      fabric::ping_plan plan{addr, static_cast<std::uint16_t>(port), size, count};
      auto got = serving ? fabric::serve_pings(plan, bounds) : fabric::send_pings(plan, bounds);
      out.pings = got.exchanged;
      out.connect_us = got.connect_us;
      if (!serving) out.latency = got.rtt.summary();
      return;
    }
    case check::connect: {
      fabric::connect_plan plan{addr, static_cast<std::uint16_t>(port), count};
      auto got = serving ? fabric::accept_connections(plan, bounds) : fabric::make_connections(plan, bounds);
      out.connections = got.connected;
      // Every connection's setup is the measurement: no one connect_us.
      if (!serving) out.latency = got.setup.summary();
      return;
    }
    case check::ud: {
      fabric::datagram_plan plan;
      plan.addr = addr;
      plan.port = static_cast<std::uint16_t>(port);
      plan.size = size;
      plan.count = count;
      auto got = serving ? fabric::serve_datagrams(plan, bounds) : fabric::send_datagrams(plan, bounds);
      out.pings = got.received;
      out.sent = got.sent;
      out.connect_us = got.connect_us;
      if (serving) return;
      if (auto rtt = got.rtt.summary(); rtt.count > 0) out.latency = rtt;
      out.lost = got.sent - got.received;
      // Loss is the UD check's failure: RC hides it in retransmissions.
      if (*out.lost > 0)
        throw fabric::error(fabric::exit_code::test_failed,
                            fmt::format("{} of {} datagrams lost", *out.lost, got.sent));
      return;
    }
    case check::acm:
      // Each side asks its own service for the other: no traffic between
      // them, so nothing to meet.
      look_up(r, peer_addr, count, bounds.work_from_now(), out);
      return;
    case check::multicast:
      throw fabric::error(fabric::exit_code::usage, "the multicast check has no pairs of its own (run_group)");
    case check::bw: {
      fabric::bandwidth_plan plan;
      plan.addr = addr;
      plan.port = static_cast<std::uint16_t>(port);
      plan.size = size;
      plan.count = count;
      plan.duration = std::chrono::milliseconds(pair_duration(r).value_or(0));
      plan.bidirectional = !r.unidirectional;
      auto got = serving ? fabric::serve_bandwidth(plan, bounds) : fabric::measure_bandwidth(plan, bounds);
      out.connect_us = got.connect_us;
      out.client_to_server = got.client_to_server;
      out.server_to_client = got.server_to_client;
      return;
    }
  }
}

std::vector<pair_result> run_group(const options& opt, const place& where, const std::vector<std::string>& addrs,
                                   int sweep, agreement& met) {
  const auto& r = opt.run;
  auto n = static_cast<std::uint32_t>(where.hosts.size());
  auto me = static_cast<std::uint32_t>(where.rank);
  auto t0 = fabric::clock::now();
  // Every wait of the check: the join, the meeting's own, the exchange.
  auto until = fabric::deadline::after(std::chrono::milliseconds(r.timeout_ms));
  fabric::group_plan plan;
  plan.group = r.group;
  plan.local = addrs[me];
  plan.member = me;
  plan.members = n;
  plan.size = static_cast<std::uint32_t>(pair_size(r));
  plan.count = static_cast<std::uint64_t>(pair_count(r).value_or(0));
  std::optional<fabric::group_member> member;
  std::optional<fabric::group_outcome> heard;
  std::string failure;
  try {
    member.emplace(plan, until);
  } catch (const fabric::error& e) {
    if (e.code() == fabric::exit_code::interrupted || e.code() == fabric::exit_code::output_closed) throw;
    failure = e.what();
  }
  // A rank that could not join still comes to the meeting: nobody waits
  // for it in vain.
  met = gather_everyone(opt, where, addrs, sweep);
  if (member && met.error.empty()) {
    try {
      heard = member->exchange(fabric::deadline::after(std::chrono::milliseconds(r.timeout_ms)));
    } catch (const fabric::error& e) {
      if (e.code() == fabric::exit_code::interrupted || e.code() == fabric::exit_code::output_closed) throw;
      failure = e.what();
    }
  } else if (failure.empty()) {
    failure = fmt::format("no meeting of the ranks: {}", met.error);
  }
  std::vector<pair_result> out;
  for (std::uint32_t peer = 0; peer < n; ++peer) {
    if (peer == me) continue;
    auto& p = out.emplace_back();
    p.check = check::multicast;
    p.server_rank = static_cast<int>(std::min(me, peer));
    p.client_rank = static_cast<int>(std::max(me, peer));
    p.server = where.hosts[static_cast<std::size_t>(p.server_rank)];
    p.client = where.hosts[static_cast<std::size_t>(p.client_rank)];
    p.role = me < peer ? "server" : "client";
    p.port = r.port;
    p.elapsed_us = fabric::us_since(t0);
    if (member) p.connect_us = member->join_us();
    if (!heard) {
      p.error = failure;
      continue;
    }
    p.sent = heard->sent;
    p.pings = heard->received[peer];
    p.lost = plan.count - heard->received[peer];
    p.ok = *p.lost == 0;
    if (!p.ok)
      p.error = fmt::format("{} heard {} of {}'s {} datagrams", where.hosts[me], heard->received[peer],
                            where.hosts[peer], plan.count);
  }
  return out;
}

}  // namespace sweep
