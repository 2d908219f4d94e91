// The checks a pair can make, one entry each of one table: the flows of
// lib/common, one side each, and what each check's human line says.
#include "fabric-sweep/rank/checks.hpp"

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/pair.hpp"

#include "fabric/acm/acm.hpp"
#include "fabric/base/at_exit.hpp"
#include "fabric/cli/console.hpp"
#include "fabric/cli/fields.hpp"
#include "fabric/flows/rc_bandwidth.hpp"
#include "fabric/flows/rc_connect.hpp"
#include "fabric/flows/rc_ping.hpp"
#include "fabric/flows/ud_ping.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace sweep {

namespace {

std::uint64_t count_of(const pair_job& job) { return static_cast<std::uint64_t>(pair_count(job.options).value_or(0)); }
std::uint32_t size_of(const pair_job& job) { return static_cast<std::uint32_t>(pair_size(job.options)); }
/// The server listens on every address (the rule names how peers reach
/// it, which need not be how it sees itself), or on its rail's; the client
/// dials the rule's, or its peer's on the rail, leaving from its own.
std::string dial_addr(const pair_job& job) { return job.serving ? job.own_addr : job.peer_addr; }
std::string source_addr(const pair_job& job) { return job.serving ? std::string() : job.own_addr; }

namespace field = pair_field;
using fabric::cli::fields;

// ---- ping: an RC ping-pong's round trips (rping's flow) ----

void run_ping(const pair_job& job, pair_result& out) {
  fabric::ping_plan plan{dial_addr(job), job.port, size_of(job), count_of(job), source_addr(job)};
  fabric::ping_outcome got;
  // What the flow did goes into the pair's line however it ends: a pair
  // that ran out of time, or whose peer went away, says how far it got.
  fabric::at_exit taken{[&] {
    out.pings = got.exchanged;
    if (!got.peer.empty()) out.connect_us = got.connect_us;
    if (!job.serving && got.rtt.count() > 0) out.latency = got.rtt.summary();
  }};
  job.serving ? fabric::serve_pings(plan, job.bounds, got) : fabric::send_pings(plan, job.bounds, got);
}

void say_ping(fields& line, const pair_result& p, std::uint64_t) {
  if (!p.latency) {
    line.put(field::served_pings, p.pings);
    return;
  }
  line.put(field::pings, p.pings).put(field::rtt, p.latency);
}

// ---- connect: RC connection setup, one after another (ucmatose's flow) ----

void run_connect(const pair_job& job, pair_result& out) {
  fabric::connect_plan plan{dial_addr(job), job.port, count_of(job), source_addr(job)};
  fabric::connect_outcome got;
  fabric::at_exit taken{[&] {  // however it ends, as run_ping's
    out.connections = got.connected;
    // Every connection's setup is the measurement: no one connect_us.
    if (!job.serving && got.setup.count() > 0) out.latency = got.setup.summary();
  }};
  job.serving ? fabric::accept_connections(plan, job.bounds, got) : fabric::make_connections(plan, job.bounds, got);
}

void say_connect(fields& line, const pair_result& p, std::uint64_t) {
  if (!p.latency) {
    line.put(field::accepted, p.connections);
    return;
  }
  line.put(field::connections, p.connections).put(field::setup, p.latency);
}

// ---- ud: UD round trips over SIDR, and loss (udaddy's flow) ----

void run_ud(const pair_job& job, pair_result& out) {
  fabric::datagram_plan plan;
  plan.addr = dial_addr(job);
  plan.port = job.port;
  plan.size = size_of(job);
  plan.count = count_of(job);
  plan.source = source_addr(job);
  fabric::datagram_outcome got;
  {
    fabric::at_exit taken{[&] {  // however it ends, as run_ping's
      out.pings = got.received;
      out.sent = got.sent;
      if (!got.peer.empty()) out.connect_us = got.connect_us;
      if (job.serving) return;
      if (got.rtt.count() > 0) out.latency = got.rtt.summary();
      out.lost = got.sent - got.received;
    }};
    job.serving ? fabric::serve_datagrams(plan, job.bounds, got) : fabric::send_datagrams(plan, job.bounds, got);
  }
  // Loss is the UD check's failure: RC hides it in retransmissions.
  if (!job.serving && *out.lost > 0)
    throw fabric::error(fabric::exit_code::test_failed, fmt::format("{} of {} datagrams lost", *out.lost, got.sent));
}

void say_ud(fields& line, const pair_result& p, std::uint64_t) {
  if (!p.latency) {
    line.put(field::served_datagrams, p.pings);
    return;
  }
  line.put(field::sent, p.sent).put(field::back, p.pings).put(field::rtt, p.latency);
}

// ---- acm: each side's ACM lookups of the other (ib_acme -f i's request) ----

void run_acm(const pair_job& job, pair_result& out) {
  namespace acm = fabric::acm;
  // Each side asks its own service for the other: no traffic between
  // them, so nothing to meet.
  auto work = job.bounds.work_from_now();
  auto bytes = acm::ip_bytes(job.peer_addr);
  if (bytes.empty())
    throw fabric::error(fabric::exit_code::usage,
                        fmt::format("--check acm looks up IP addresses; {} is not one", fabric::printable(job.peer_addr)));
  const std::vector<acm::endpoint> request{acm::endpoint::address(bytes, acm::flag_dest)};
  auto service = acm::client::connect(job.options.acm_service, acm::service_port(), work.next());
  fabric::latency_stats took;
  out.lookups = 0;
  for (std::uint64_t i = 0, n = count_of(job); i < n; ++i) {
    auto t0 = fabric::clock::now();
    auto reply = service.resolve(request, work.next());
    if (reply.status != 0)
      throw fabric::error(fabric::exit_code::resolve_failed,
                          fmt::format("ACM lookup of {}: {}", fabric::printable(job.peer_addr), acm::status_name(reply.status)));
    took.add(fabric::us_since(t0));
    ++*out.lookups;
  }
  out.latency = took.summary();
}

void say_acm(fields& line, const pair_result& p, std::uint64_t) {
  line.put(field::lookups, p.lookups)
      .say(fmt::format("of {}", p.role == "server" ? p.client : p.server), " ")
      .put(field::lookup_time, p.latency);
}

// ---- multicast: every host in one group at once (mckey's flow; run_group) ----

void say_multicast(fields& line, const pair_result& p, std::uint64_t) {
  line.put(field::heard, p.received).put(field::sent, p.sent);
}

// ---- bw: RDMA WRITE bandwidth each way (ib_write_bw's flow) ----

void run_bw(const pair_job& job, pair_result& out) {
  fabric::bandwidth_plan plan;
  plan.addr = dial_addr(job);
  plan.port = job.port;
  plan.size = size_of(job);
  plan.count = count_of(job);
  plan.duration = std::chrono::milliseconds(pair_duration(job.options).value_or(0));
  plan.bidirectional = !job.options.unidirectional;
  plan.source = source_addr(job);
  fabric::bandwidth_outcome got;
  fabric::at_exit taken{[&] {  // however it ends, as run_ping's
    if (!got.peer.empty()) out.connect_us = got.connect_us;
    out.client_to_server = got.client_to_server;
    out.server_to_client = got.server_to_client;
  }};
  job.serving ? fabric::serve_bandwidth(plan, job.bounds, got) : fabric::measure_bandwidth(plan, job.bounds, got);
}

/// "1 MiB", "64 KiB", "100 B": a write's size.
std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

void say_bw(fields& line, const pair_result& p, std::uint64_t size) {
  // Each direction is named by its hosts, which no one field's words can
  // hold: the line says them, "bandwidth" holds them (pair_fields).
  auto way = [&](const std::string& from, const std::string& to, const std::optional<fabric::transfer>& t) {
    if (t) line.say(fmt::format("{} -> {} {} Gb/s", from, to, gbps_text(t->gbps())));
  };
  way(p.client, p.server, p.client_to_server);
  way(p.server, p.client, p.server_to_client);
  line.say(fmt::format("in {} writes", size_text(size)), " ");
}

constexpr int max_datagram = 1 << 20;

constexpr std::array<check_kind, 7> kinds{{
    {check::ping, "ping", "RC round trips", "round-trip time", judged_by::time, true, 100, 64, max_datagram, 0,
     run_ping, say_ping},
    {check::connect, "connect", "RC connection setup", "connection setup time", judged_by::time, true, 100, 64,
     max_datagram, 0, run_connect, say_connect},
    {check::ud, "ud", "UD round trips and loss", "UD round-trip time", judged_by::time, true, 100, 64, max_datagram, 0,
     run_ud, say_ud},
    {check::acm, "acm", "each side's ACM lookups of the other", "ACM lookup time", judged_by::time, true, 100, 64,
     max_datagram, 0, run_acm, say_acm},
    {check::multicast, "multicast", "every host in one group, each hearing every other", "multicast delivery",
     judged_by::delivery, false, 100, 64, max_datagram, 0, nullptr, say_multicast},
    {check::bw, "bw", "RDMA WRITE bandwidth, both directions at once", "RDMA WRITE bandwidth", judged_by::bandwidth,
     true, 0, 1 << 20, static_cast<int>(fabric::max_write_bytes), 1000, run_bw, say_bw},
    // Each host alone, from each of its rails to each other (--rails): the
    // ping check's flow, both sides on the host (rank/intra.cpp).
    {check::intra, "intra", "RC round trips between every two rails of each host (--rails)", "rail-to-rail round-trip time",
     judged_by::time, false, 100, 64, max_datagram, 0, nullptr, say_ping},
}};

static_assert([] {
  for (std::size_t i = 0; i < kinds.size(); ++i)
    if (static_cast<std::size_t>(kinds[i].id) != i) return false;
  return true;
}(), "the table is in the order of the enum");

}  // namespace

std::span<const check_kind> check_kinds() noexcept { return kinds; }
const check_kind& kind_of(check c) noexcept { return kinds[static_cast<std::size_t>(c)]; }
std::string_view check_name(check c) noexcept { return kind_of(c).name; }
std::string_view check_measure(check c) noexcept { return kind_of(c).measure; }
bool measures_bandwidth(check c) noexcept { return kind_of(c).judged == judged_by::bandwidth; }

std::string gbps_text(double gbps) {
  if (!std::isfinite(gbps) || gbps <= 0 || gbps >= 10) return fmt::format("{:.1f}", gbps);
  int decimals = std::min(6, 1 - static_cast<int>(std::floor(std::log10(gbps))));
  return fmt::format("{:.{}f}", gbps, decimals);
}

std::optional<check> check_of(std::string_view name) noexcept {
  for (const auto& k : kinds)
    if (k.name == name) return k.id;
  return std::nullopt;
}

std::optional<int> pair_count(const run_options& r) {
  if (r.count) return r.count;
  if (int n = kind_of(r.check).default_count; n > 0) return n;
  return std::nullopt;
}

int pair_size(const run_options& r) { return r.size.value_or(kind_of(r.check).default_size); }

std::optional<int> pair_duration(const run_options& r) {
  const auto& k = kind_of(r.check);
  if (k.default_duration_ms == 0 || r.count) return std::nullopt;
  return r.duration_ms.value_or(k.default_duration_ms);
}

}  // namespace sweep
