// One process's part of the sweep: its pairs, round by round.
#include "sweep.hpp"

#include "fabric/console.hpp"
#include "fabric/json_values.hpp"
#include "fabric/rc_ping.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sweep {

using fabric::exit_code;

namespace {

/// How many timeouts late a peer may be (its earlier rounds' dead hosts).
constexpr int max_late_rounds = 3;

/// One pair: the server side listens and echoes, the client side times.
pair_result run_pair(const options& opt, const place& where, const std::vector<std::string>& addrs, int round,
                     const pairing& p) {
  const auto& r = opt.run;
  bool serving = where.rank == p.server;
  pair_result out;
  out.round = round;
  out.server = where.hosts[static_cast<std::size_t>(p.server)];
  out.client = where.hosts[static_cast<std::size_t>(p.client)];
  out.role = serving ? "server" : "client";
  out.port = pair_port(r.port, static_cast<int>(where.hosts.size()), round, p);
  fabric::ping_plan plan;
  // The server listens on every address (the rule names how peers reach
  // it, which need not be how it sees itself); the client dials the rule's.
  if (!serving) plan.addr = addrs[static_cast<std::size_t>(p.server)];
  plan.port = static_cast<std::uint16_t>(out.port);
  plan.size = static_cast<std::uint32_t>(r.size);
  plan.count = static_cast<std::uint64_t>(r.count);
  // Rounds are not in lockstep: a live peer may still be in an earlier
  // round, waiting out a dead host there. A pair of round r may take r + 1
  // timeouts (at most four), so that a peer late by that much still meets.
  auto late = std::chrono::milliseconds(r.timeout_ms) * std::min(round + 1, max_late_rounds + 1);
  auto until = fabric::deadline::after(late);
  auto t0 = fabric::clock::now();
  try {
    auto got = serving ? fabric::serve_pings(plan, until) : fabric::send_pings(plan, until);
    out.pings = got.exchanged;
    out.connect_us = got.connect_us;
    if (!serving) out.latency = got.rtt.summary();
    out.ok = true;
  } catch (const fabric::error& e) {
    if (e.code() == exit_code::interrupted || e.code() == exit_code::output_closed) throw;
    out.error = e.what();
  }
  out.elapsed_us = fabric::us_since(t0);
  return out;
}

std::string pair_line(const pair_result& p) {
  std::string head = fmt::format("round {}: {} <-> {}", p.round + 1, p.server, p.client);
  if (!p.ok) return fmt::format("{}: error: {}", head, p.error);
  if (p.latency)
    return fmt::format("{}: {} pings, rtt min {:.1f} p50 {:.1f} p99 {:.1f} max {:.1f} us", head, p.pings, p.latency->min,
                       p.latency->p50, p.latency->p99, p.latency->max);
  return fmt::format("{}: served {} pings", head, p.pings);
}

}  // namespace

nlohmann::json pair_json(const pair_result& p, std::size_t index) {
  nlohmann::json j{{"kind", "pair"},
                   {"index", index},
                   {"ok", p.ok},
                   {"error", p.ok ? nlohmann::json(nullptr) : nlohmann::json(p.error)},
                   {"round", p.round + 1},
                   {"server", p.server},
                   {"client", p.client},
                   {"side", p.role},
                   {"port", p.port},
                   {"pings", p.pings},
                   {"connect_us", fabric::value_or_null(p.connect_us)},
                   {"elapsed_us", p.elapsed_us},
                   {"latency", fabric::value_or_null(p.latency)}};
  return j;
}

fabric::verdict run(const options& opt, run_report& rep, fabric::console& con) {
  rep.where = find_place(opt.run, from_environ(), fabric::host_name());
  const auto& where = *rep.where;
  auto addrs = addresses(opt.run, where.hosts);
  auto schedule = rounds(static_cast<int>(where.hosts.size()));
  rep.round_count = static_cast<int>(schedule.size());
  con.set_role("rank");
  con.event("sweep", {{"rank", where.rank}, {"host", where.hosts[static_cast<std::size_t>(where.rank)]},
                      {"hosts", where.hosts}, {"rounds", rep.round_count}});
  auto t0 = fabric::clock::now();
  for (int round = 0; round < rep.round_count; ++round) {
    for (const auto& p : schedule[static_cast<std::size_t>(round)]) {
      if (p.server != where.rank && p.client != where.rank) continue;
      rep.pairs.push_back(run_pair(opt, where, addrs, round, p));
      const auto& done = rep.pairs.back();
      con.line(pair_line(done));
      con.event("pair", pair_json(done, rep.pairs.size() - 1));
    }
  }
  rep.elapsed_us = fabric::us_since(t0);
  std::size_t failed = 0;
  for (const auto& p : rep.pairs) failed += p.ok ? 0 : 1;
  if (failed > 0) return {exit_code::test_failed, fmt::format("{} of {} pairs failed", failed, rep.pairs.size())};
  return {};
}

void to_json(nlohmann::json& j, const options& opt, const run_report& rep) {
  j["role"] = opt.reporting ? "report" : "rank";
  j["options"] = options_json(opt);
  nlohmann::json results = nlohmann::json::array();
  for (std::size_t i = 0; i < rep.pairs.size(); ++i) results.push_back(pair_json(rep.pairs[i], i));
  j["results"] = std::move(results);
  if (!rep.where) {
    j["summary"] = nlohmann::json::object();
    return;
  }
  std::size_t failed = 0;
  for (const auto& p : rep.pairs) failed += p.ok ? 0 : 1;
  j["summary"] = {{"rank", rep.where->rank},
                  {"host", rep.where->hosts[static_cast<std::size_t>(rep.where->rank)]},
                  {"hosts", rep.where->hosts},
                  {"rank_from", rep.where->source},
                  {"rounds", rep.round_count},
                  {"pairs", rep.pairs.size()},
                  {"failed", failed},
                  {"elapsed_us", fabric::value_or_null(rep.elapsed_us)}};
}

}  // namespace sweep
