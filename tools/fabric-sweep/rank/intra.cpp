// One host's ping-pongs with itself, and things run at once, a thread each.
#include "fabric-sweep/rank/intra.hpp"

#include "fabric/base/cpus.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/flows/rc_ping.hpp"

#include <fmt/format.h>

#include <thread>

namespace sweep {

pair_result ping_self(const run_options& r, const std::string& host, const self_ping& plan) {
  pair_result out;
  out.server = out.client = host;
  out.role = "client";
  out.port = plan.port;
  fabric::ping_plan ping;
  ping.addr = plan.to;
  ping.source = plan.from;
  ping.port = static_cast<std::uint16_t>(plan.port);
  ping.size = plan.size;
  ping.count = plan.count;
  auto bounds = fabric::pair_bounds::from_now(r.each_wait(), r.pair_timeout(), r.each_wait());
  bounds.key = plan.key;
  std::exception_ptr served;
  auto server = fabric::start_without_signals<std::thread>([&] {
    try {
      if (!plan.to_cpus.empty()) fabric::keep_thread_to(plan.to_cpus);
      fabric::ping_outcome served_pings;
      fabric::serve_pings(ping, bounds, served_pings);
    } catch (...) {
      served = std::current_exception();
    }
  });
  if (!plan.from_cpus.empty()) fabric::keep_thread_to(plan.from_cpus);
  auto t0 = fabric::clock::now();
  try {
    fabric::ping_outcome got;
    fabric::send_pings(ping, bounds, got);
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

std::vector<std::exception_ptr> all_at_once(std::size_t n, const std::function<void(std::size_t)>& job) {
  std::vector<std::exception_ptr> ended(n);
  std::vector<std::thread> running;
  running.reserve(n);
  auto join_all = [&running] {
    for (auto& t : running) t.join();
  };
  try {
    for (std::size_t i = 0; i < n; ++i)
      running.push_back(fabric::start_without_signals<std::thread>([&job, &ended, i] {
        try {
          job(i);
        } catch (...) {
          ended[i] = std::current_exception();
        }
      }));
  } catch (...) {
    join_all();  // no thread is left running when one could not start
    throw;
  }
  join_all();
  return ended;
}

std::vector<pair_result> intra_round(const options& opt, const place& where, const rails_here& rails,
                                     const port_plan& ports, int round, int step) {
  const auto& r = opt.run;
  const auto& host = where.hosts[static_cast<std::size_t>(where.rank)];
  bool alone = r.check == check::intra;
  auto meetings = intra_meetings(rails.plan.size());
  std::vector<pair_result> out(meetings.size());
  std::vector<std::size_t> tried;
  for (std::size_t k = 0; k < meetings.size(); ++k) {
    const auto& m = meetings[k];
    auto& p = out[k];
    p.check = check::intra;
    p.round = round;
    p.server_rank = p.client_rank = where.rank;
    p.server = p.client = host;
    p.role = "client";
    p.port = ports.intra_port(step, static_cast<int>(k));
    p.rails = m;
    p.server_rail = rails.plan.names[static_cast<std::size_t>(m.server)];
    p.client_rail = rails.plan.names[static_cast<std::size_t>(m.client)];
    p.error = rails.cannot(where.rank, m.client, where.hosts);
    if (p.error.empty()) p.error = rails.cannot(where.rank, m.server, where.hosts);
    if (p.error.empty()) tried.push_back(k);
  }
  auto ended = all_at_once(tried.size(), [&](std::size_t i) {
    auto k = tried[i];
    const auto& m = meetings[k];
    self_ping plan;
    plan.from = rails.plan.address_of(where.rank, m.client);
    plan.to = rails.plan.address_of(where.rank, m.server);
    plan.port = out[k].port;
    plan.size = static_cast<std::uint32_t>(alone ? pair_size(r) : kind_of(check::intra).default_size);
    plan.count = static_cast<std::uint64_t>(alone ? pair_count(r).value_or(kind_of(check::intra).default_count)
                                                  : kind_of(check::intra).default_count);
    plan.key = pair_key(step, {where.rank, where.rank, 0}, m);
    if (const auto* from = rails.own(m.client)) plan.from_cpus = from->cpus;
    if (const auto* to = rails.own(m.server)) plan.to_cpus = to->cpus;
    auto skeleton = out[k];
    auto got = ping_self(r, host, plan);
    got.check = skeleton.check;
    got.round = skeleton.round;
    got.server_rank = got.client_rank = where.rank;
    got.rails = skeleton.rails;
    got.server_rail = skeleton.server_rail;
    got.client_rail = skeleton.client_rail;
    out[k] = std::move(got);
  });
  for (const auto& e : ended)
    if (e) std::rethrow_exception(e);  // only what ends the run: ping_self keeps the rest in its result
  return out;
}

}  // namespace sweep
