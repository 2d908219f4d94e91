// The host's RC ping-pongs with itself: over its own address, and from
// each of its rails to each other one. Both sides of each run here, each
// in a thread of its own.
#include "fabric-sweep/health/health.hpp"

#include "fabric/base/text.hpp"
#include "fabric/flows/rc_ping.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <thread>

namespace sweep {

namespace {

/// Pings `to` from `from` (empty: the route's address): a server thread
/// listens on `to`, this thread connects to it, each wait bounded by
/// --timeout, the work by --pair-timeout.
pair_result ping_pair(const options& opt, const std::string& host, const std::string& from, const std::string& to, int port) {
  pair_result out;
  const auto& r = opt.run;
  out.server = out.client = host;
  out.role = "client";
  out.port = port;
  fabric::ping_plan plan;
  plan.addr = to;
  plan.source = from;
  plan.port = static_cast<std::uint16_t>(port);
  plan.size = static_cast<std::uint32_t>(pair_size(r));
  plan.count = static_cast<std::uint64_t>(pair_count(r).value_or(100));
  auto bounds = fabric::pair_bounds::from_now(r.each_wait(), r.pair_timeout(), r.each_wait());
  std::exception_ptr served;
  std::thread server([&] {
    try {
      fabric::ping_outcome served_pings;
      fabric::serve_pings(plan, bounds, served_pings);
    } catch (...) {
      served = std::current_exception();
    }
  });
  auto t0 = fabric::clock::now();
  try {
    fabric::ping_outcome got;
    fabric::send_pings(plan, bounds, got);
    out.pings = got.exchanged;
    out.connect_us = got.connect_us;
    out.latency = got.rtt.summary();
    out.ok = true;
  } catch (const fabric::error& e) {
    out.error = e.what();
    if (e.ends_run()) {
      server.join();
      throw;
    }
  }
  server.join();
  out.elapsed_us = fabric::us_since(t0);
  // The server's side fails only with the client's (then the client's word
  // stands), or on its own when it could not listen on the address.
  if (served && out.ok) {
    try {
      std::rethrow_exception(served);
    } catch (const fabric::error& e) {
      if (e.ends_run()) throw;
      out.ok = false;
      out.error = fmt::format("serving: {}", e.what());
    }
  }
  return out;
}

}  // namespace

void ping_host(const options& opt, const std::string& host, health_report& rep) {
  if (!opt.health.no_intra) {
    auto on = rails(rep);
    for (std::size_t i = 0; i < on.size(); ++i)
      for (std::size_t j = i + 1; j < on.size(); ++j) rep.rail_pairs.push_back({on[i], on[j], {}});
  }
  if (opt.run.port + rep.rail_pairs.size() > 65535)
    fabric::cli::usage_error(fmt::format("--port {}: the rail pairs take the ports above it, up to {}, past 65535",
                                         opt.run.port, opt.run.port + rep.rail_pairs.size()));
  // All at once, as the rails would work: a dead rail costs one wait, not
  // one for each of its pairs, and the whole check stays within a node
  // health checker's time.
  rep.self = pair_result{};
  std::vector<std::exception_ptr> ended(rep.rail_pairs.size() + 1);
  std::vector<std::thread> running;
  auto start = [&](std::size_t slot, pair_result& out, std::string from, std::string to, int port) {
    running.emplace_back([&, slot, from = std::move(from), to = std::move(to), port] {
      try {
        out = ping_pair(opt, host, from, to, port);
      } catch (...) {
        ended[slot] = std::current_exception();
      }
    });
  };
  start(0, *rep.self, {}, rep.address, opt.run.port);
  for (std::size_t k = 0; k < rep.rail_pairs.size(); ++k) {
    auto& pair = rep.rail_pairs[k];
    const auto &from = rep.ports[pair.from], &to = rep.ports[pair.to];
    auto port = opt.run.port + 1 + static_cast<int>(k);
    if (from.address.empty() || to.address.empty()) {
      const auto& lacking = from.address.empty() ? from : to;
      pair.result.server = pair.result.client = host;
      pair.result.port = port;
      pair.result.error = lacking.netdev.empty()
                              ? fmt::format("{} port {} has no network device", fabric::printable(lacking.info.device),
                                            lacking.info.port)
                              : fmt::format("{} port {} has no address on {}", fabric::printable(lacking.info.device),
                                            lacking.info.port, fabric::printable(lacking.netdev));
      continue;
    }
    start(k + 1, pair.result, from.address, to.address, port);
  }
  for (auto& t : running) t.join();
  // What ended the run (Ctrl-C) ends it here too; a ping-pong it cut short
  // has no outcome.
  auto first = std::find_if(ended.begin(), ended.end(), [](const std::exception_ptr& e) { return e != nullptr; });
  if (first == ended.end()) return;
  if (ended[0]) rep.self.reset();
  for (std::size_t k = 0; k < rep.rail_pairs.size(); ++k)
    if (ended[k + 1]) rep.rail_pairs[k].result.error = "the check did not finish";
  std::rethrow_exception(*first);
}

}  // namespace sweep
