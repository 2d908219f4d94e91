// One process's part of the sweep: its pairs, round by round.
#include "fabric-sweep/rank/run.hpp"
#include "fabric-sweep/rank/intra.hpp"
#include "fabric-sweep/rank/multicast.hpp"
#include "fabric-sweep/rank/presence.hpp"
#include "fabric-sweep/rank/rounds.hpp"

#include "fabric/base/cpus.hpp"
#include "fabric/cli/console.hpp"
#include "fabric/cli/json_values.hpp"
#include "fabric/cm/cm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace sweep {

using fabric::exit_code;

namespace {

/// What every pair of this rank's sweep shares: who and where, the
/// ports, and the rails (nullptr: the address rule's one rail).
struct sweep_context {
  const options& opt;
  const place& where;
  const std::vector<std::string>& addrs;
  port_plan ports;
  const rails_here* rails = nullptr;
};

/// This rank's result of pair `p` in `round` before it is met: who, which
/// side, which port, which check; on rails, which rails (`on`).
pair_result pair_of(const sweep_context& ctx, int round, int port_round, const pairing& p, const rail_meeting* on) {
  const auto& where = ctx.where;
  pair_result out;
  out.round = round;
  out.server_rank = p.server;
  out.client_rank = p.client;
  out.server = where.hosts[static_cast<std::size_t>(p.server)];
  out.client = where.hosts[static_cast<std::size_t>(p.client)];
  out.role = where.rank == p.server ? "server" : "client";
  out.port = ctx.ports.port(port_round, p.slot,
                            on ? meeting_index(*on, ctx.rails->plan.size(), ctx.rails->cross) : 0);
  out.check = ctx.opt.run.check;
  if (on) {
    out.rails = *on;
    out.server_rail = ctx.rails->plan.names[static_cast<std::size_t>(on->server)];
    out.client_rail = ctx.rails->plan.names[static_cast<std::size_t>(on->client)];
  }
  return out;
}

/// One pair: the server side listens and answers, the client side measures.
/// Meeting the peer may take `late + 1` timeouts (it may still be waiting
/// out a dead host in `late` earlier rounds), and longer while the peer
/// says it is on its way (presence.hpp), but ends once `gone` knows it
/// left or stopped answering; once they met, the pair has one timeout.
/// `port_round` counts the rounds of earlier sweeps too, so that no two
/// sweeps share a port: it is the step the ranks tell each other. On
/// rails (`on`), each side on its rail's address, the key naming them.
pair_result run_pair(const sweep_context& ctx, int round, int port_round, const pairing& p, int late, departures& gone,
                     const rail_meeting* on) {
  const auto& r = ctx.opt.run;
  const auto& where = ctx.where;
  bool serving = where.rank == p.server;
  pair_result out = pair_of(ctx, round, port_round, p, on);
  auto bounds = fabric::pair_bounds::from_now(r.pair_timeout() * (late + 1), r.pair_timeout(), r.each_wait());
  int peer = serving ? p.client : p.server;
  bounds.peer_on_its_way = peer_on_its_way(r, ctx.addrs[static_cast<std::size_t>(peer)], peer, port_round);
  bounds.peer_gone = [&gone, peer, port_round, &name = where.hosts[static_cast<std::size_t>(peer)]]() -> std::optional<std::string> {
    if (auto why = gone.why_gone(peer, port_round)) return name + " " + *why;
    return std::nullopt;
  };
  bounds.key = on ? pair_key(port_round, p, *on) : pair_key(port_round, p);
  pair_job job{r, serving, ctx.addrs[static_cast<std::size_t>(peer)], {}, static_cast<std::uint16_t>(out.port), bounds};
  if (on) {
    const auto& plan = ctx.rails->plan;
    job.own_addr = plan.address_of(where.rank, serving ? on->server : on->client);
    job.peer_addr = plan.address_of(peer, serving ? on->client : on->server);
  }
  auto t0 = fabric::clock::now();
  try {
    run_check(job, out);
    out.ok = true;
  } catch (const fabric::peer_absent& e) {
    out.error = e.what();
    out.peer_absent = true;
  } catch (const fabric::error& e) {
    if (e.ends_run()) throw;
    out.error = e.what();
  }
  out.elapsed_us = fabric::us_since(t0);
  return out;
}

/// A pair that is not met: the peer did not come to the meeting before
/// the first round or is gone since (presence.hpp, departures), or
/// either host cannot take part (on rails: on its rail of `on`). Failed
/// without a wait, saying `error`, which is about the rank `who`.
pair_result unmet_pair(const sweep_context& ctx, int round, int port_round, const pairing& p, const rail_meeting* on,
                       int who, std::string error) {
  pair_result out = pair_of(ctx, round, port_round, p, on);
  out.error = std::move(error);
  out.peer_absent = who != ctx.where.rank;
  return out;
}

/// This host's RDMA at the address its peers dial (own_rdma_at): what
/// keeps it from the check, when that is sure, and its port; nothing for
/// the checks that do not use this host's RDMA device themselves.
fabric::own_rdma rdma_here(const options& opt, const std::string& address) {
  if (opt.run.check == check::acm) return {};  // the ACM service resolves; this host only asks it
  try {
    return fabric::own_rdma_at(address, opt.run.each_wait());
  } catch (const fabric::error& e) {
    if (e.ends_run()) throw;
    return {};  // nothing sure: the pairs will tell
  }
}

std::vector<nlohmann::json> unable_json(const run_report& rep) {
  std::vector<nlohmann::json> out;
  if (rep.where)
    for (const auto& [r, why] : rep.unable)
      out.push_back({{"host", rep.where->hosts[static_cast<std::size_t>(r)]}, {"error", why}});
  return out;
}

/// The outliers event: the pairs to meet again are retest_pairs, since
/// retest is a pair's boolean and retests a count (the option, a report
/// pair's); on rails each names its rails too. A run of one rail writes
/// its pairs as before rails were, server and client alone: a script
/// that matched them still does.
nlohmann::json agreement_json(const agreement& a, const place& where, const std::optional<std::string>& run, bool bw,
                              const rails_here* rails) {
  nlohmann::json pairs = nlohmann::json::array();
  auto host = [&where](int r) { return where.hosts[static_cast<std::size_t>(r)]; };
  auto rail = [rails](int i) { return rails->plan.names[static_cast<std::size_t>(i)]; };
  if (rails)
    for (const auto& r : a.retest_rails)
      pairs.push_back({{"server", host(r.pair.first)},
                       {"client", host(r.pair.second)},
                       {"server_rail", rail(r.rails.server)},
                       {"client_rail", rail(r.rails.client)}});
  else
    for (auto [s, c] : a.retest)
      pairs.push_back({{"server", host(s)}, {"client", host(c)}});
  bool known = a.error.empty();
  return {{"error", fabric::text_or_null(a.error)},
          {"retest_pairs", std::move(pairs)},
          {"median_p50_us", known && !bw ? nlohmann::json(a.fleet.median) : nlohmann::json(nullptr)},
          {"mad_us", known && !bw ? nlohmann::json(a.fleet.mad) : nlohmann::json(nullptr)},
          {"bar_gbps", known && bw ? fabric::value_or_null(a.bar) : nlohmann::json(nullptr)},
          {"bar_us", known && !bw ? fabric::value_or_null(a.bar) : nlohmann::json(nullptr)},
          {"ranks_heard", where.rank == 0 && known ? nlohmann::json(a.ranks_heard) : nlohmann::json(nullptr)},
          {"run", fabric::value_or_null(run)}};
}

/// The rails agreed at the start, and every rank's trouble on one, for
/// the start's line: "; rails rxe0, rxe1; node07: rail rxe1: its port is
/// Down" (the first few troubles named, the rest counted).
std::string rails_text(const rails_here& rails, const place& where) {
  constexpr std::size_t most_named = 16;
  const auto& plan = rails.plan;
  std::string names, troubles;
  for (const auto& name : plan.names) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
  std::size_t said = 0, more = 0;
  for (std::size_t r = 0; r < plan.trouble.size(); ++r)
    for (std::size_t i = 0; i < plan.trouble[r].size(); ++i) {
      if (plan.trouble[r][i].empty()) continue;
      if (said++ >= most_named) {
        ++more;
        continue;
      }
      troubles += fmt::format("; {}: rail {}: {}", where.hosts[r], plan.names[i], plan.trouble[r][i]);
    }
  if (more > 0) troubles += fmt::format("; and {} more rail{} with trouble", more, more == 1 ? "" : "s");
  return fmt::format("; rails {}{}", names.empty() ? std::string("none") : names, troubles);
}

/// How the meeting before the first round went.
std::string start_text(const agreement& start, const run_report& rep, const place& where, const rails_here* rails) {
  double s = rep.start_us.value_or(0) / 1e6;
  std::string on_rails = rails ? rails_text(*rails, where) : std::string();
  if (!start.error.empty())
    return fmt::format("start: no meeting with rank 0 in {:.1f} s ({}); every peer is tried{}", s, start.error, on_rails);
  std::string absent, unable;
  for (int r : rep.absent) absent += fmt::format(" {}", where.hosts[static_cast<std::size_t>(r)]);
  for (const auto& [r, why] : rep.unable) unable += fmt::format(" {} ({})", where.hosts[static_cast<std::size_t>(r)], why);
  return fmt::format("start: {} of {} ranks met in {:.1f} s{}{}{}{}", where.hosts.size() - rep.absent.size(),
                     where.hosts.size(), s, rep.run ? fmt::format(", run {}", *rep.run) : "",
                     absent.empty() ? "" : "; absent:" + absent, unable.empty() ? "" : "; unable:" + unable, on_rails);
}

std::string agreement_text(const agreement& a, const place& where, bool bw, const rails_here* rails) {
  if (!a.error.empty()) return fmt::format("outliers: no re-tests: {}", a.error);
  std::string bar = !a.bar ? std::string(bw ? "each pair by its ports, or too few pairs for a bar"
                                             : "too few pairs for a bar")
                    : bw   ? fmt::format("slow below {} Gb/s", gbps_text(*a.bar))
                           : fmt::format("slow above {:.1f} us; median p50 {:.1f} us, MAD {:.1f} us", *a.bar,
                                         a.fleet.median, a.fleet.mad);
  if (a.retest.empty()) return fmt::format("outliers: none ({})", bar);
  std::string names;
  auto host = [&where](int r) { return where.hosts[static_cast<std::size_t>(r)]; };
  if (rails)
    for (const auto& r : a.retest_rails) {
      const auto &sr = rails->plan.names[static_cast<std::size_t>(r.rails.server)],
                 &cr = rails->plan.names[static_cast<std::size_t>(r.rails.client)];
      names += fmt::format("{}{} <-> {} on {}", names.empty() ? "" : ", ", host(r.pair.first), host(r.pair.second),
                           sr == cr ? sr : sr + " <-> " + cr);
    }
  else
    for (auto [s, c] : a.retest) names += fmt::format("{}{} <-> {}", names.empty() ? "" : ", ", host(s), host(c));
  return fmt::format("outliers: {} ({}); meeting again", names, bar);
}

/// The ranks a rank's rounds meet, in order.
std::vector<int> peers_met(const std::vector<std::vector<pairing>>& schedule, const place& where) {
  std::vector<bool> meets(where.hosts.size(), false);
  for (const auto& round : schedule)
    for (const auto& p : round)
      if (p.server == where.rank || p.client == where.rank)
        meets[static_cast<std::size_t>(p.server == where.rank ? p.client : p.server)] = true;
  std::vector<int> out;
  for (std::size_t i = 0; i < meets.size(); ++i)
    if (meets[i]) out.push_back(static_cast<int>(i));
  return out;
}

/// The hosts a rank's rounds meet, or nullopt when they meet every other.
std::optional<std::vector<std::string>> planned_peers(const std::vector<std::vector<pairing>>& schedule,
                                                      const place& where) {
  auto peers = peers_met(schedule, where);
  if (schedule.empty() || peers.size() + 1 >= where.hosts.size()) return std::nullopt;
  std::vector<std::string> out;
  for (int r : peers) out.push_back(where.hosts[static_cast<std::size_t>(r)]);
  return out;
}

/// What a --pairs file carried from its first run, in the check's unit.
nlohmann::json first_run_json(const options& opt, const run_report& rep) {
  if (!rep.carried_bar) return nullptr;
  bool bw = measures_bandwidth(opt.run.check);
  return {{"bar_us", bw ? nlohmann::json(nullptr) : nlohmann::json(*rep.carried_bar)},
          {"bar_gbps", bw ? nlohmann::json(*rep.carried_bar) : nlohmann::json(nullptr)}};
}

/// This host's rails, in the agreed order (null for a run of one rail):
/// each one's name, its address or null, what keeps it off the sweep or
/// null, and its port (null when not known).
nlohmann::json rails_json(const run_report& rep) {
  if (!rep.rails) return nullptr;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : *rep.rails)
    out.push_back({{"name", r.name},
                   {"address", fabric::text_or_null(r.address)},
                   {"trouble", fabric::text_or_null(r.trouble)},
                   {"adapter", r.adapter ? adapter_json(*r.adapter) : nlohmann::json(nullptr)}});
  return out;
}

/// This host's own of each agreed rail, as its lines give them.
std::vector<rail_line> rails_of(const rails_here& rails, int rank) {
  std::vector<rail_line> out;
  for (int i = 0; i < rails.plan.size(); ++i) {
    rail_line r;
    r.name = rails.plan.names[static_cast<std::size_t>(i)];
    bool seated = rails.plan.seated(rank);
    r.trouble = seated ? rails.plan.trouble_of(rank, i) : std::string();
    r.address = seated && r.trouble.empty() ? rails.plan.address_of(rank, i) : std::string();
    if (const auto* own = rails.own(i)) {
      r.adapter = own->port;
      if (!seated) r.trouble = own->trouble;
      if (!seated && own->trouble.empty()) r.address = own->address;
    }
    out.push_back(std::move(r));
  }
  return out;
}

/// Each agreed rail's port's data rate here (0 unknown): --expect-gbps
/// auto's, rail by rail.
std::vector<double> rail_rates(const rails_here& rails) {
  std::vector<double> out;
  for (int i = 0; i < rails.plan.size(); ++i) {
    const auto* own = rails.own(i);
    out.push_back(own && own->port ? data_rate_gbps(rate_facts(*own->port)).value_or(0) : 0);
  }
  return out;
}

/// This host's rails by --rails, looked for before the start.
std::vector<own_rail> rails_found(const options& opt, const rail_spec& spec, const std::string& host) {
  auto at = [&opt](const std::string& address) {
    try {
      return fabric::own_rdma_at(address, opt.run.each_wait());
    } catch (const fabric::error& e) {
      if (e.ends_run()) throw;
      return fabric::own_rdma{};  // nothing sure: the pairs will tell
    }
  };
  return find_rails(spec, this_host(), spec.by == rail_spec::kind::templates ? std::vector<fabric::port_info>{} : fabric::all_ports(),
                    host, at);
}

nlohmann::json absent_names(const run_report& rep) {
  nlohmann::json out = nlohmann::json::array();
  if (rep.where)
    for (int r : rep.absent) out.push_back(rep.where->hosts[static_cast<std::size_t>(r)]);
  return out;
}

}  // namespace

fabric::verdict run(const options& opt, run_report& rep, fabric::console& con) {
  auto env = from_environ();
  rep.where = find_place(opt.run, env, fabric::host_name());
  const auto& where = *rep.where;
  auto addrs = addresses(opt.run, where.hosts);
  int n = static_cast<int>(where.hosts.size());
  if (port_cycle(opt.run.port, n) < max_late_rounds + 2)
    fabric::cli::usage_error(fmt::format("--port {}: too few ports above it for the rounds of {} hosts", opt.run.port, n));
  auto spec = rail_spec_of(opt.run.rails);
  bool on_rails = spec.given();
  // --check intra: each host alone, its rails with one another; --intra:
  // that round too, after the rounds of another check.
  bool alone = opt.run.check == check::intra;
  bool intra = on_rails && (alone || opt.run.intra);
  bool group = !kind_of(opt.run.check).in_rounds && !alone;
  // A --pairs file is read once, as it comes: its rounds, and the bar of
  // the run whose outliers it holds.
  auto schedule = group || alone ? std::vector<std::vector<pairing>>{} : schedule_of(opt.run, where, &rep.carried_bar);
  rep.round_count = group ? 1 : static_cast<int>(schedule.size()) + (intra ? 1 : 0);
  rep.peers = alone ? std::optional(std::vector<std::string>{}) : planned_peers(schedule, where);
  con.set_role("rank");
  // Where this rank is, for peers that wait for it: up before any peer may
  // ask (the rounds start after the meeting below).
  std::optional<presence> here;
  if (!group && !alone) here.emplace(opt.run, where.rank);

  // Every rank meets rank 0 before the first round: however far apart the
  // launcher started them, the rounds start together, and a host that did
  // not come costs its peers no wait, nor does one that says there it
  // surely cannot take part (no RDMA device, its port down): its pairs
  // fail at once on both sides. On rails, each rank tells what it has of
  // each, and rank 0 answers the rails they all meet on: a rail of one
  // host that is down or missing fails its pairs alone, at once.
  auto t0 = fabric::clock::now();
  std::optional<rails_here> rails;
  if (on_rails) {
    rails.emplace();
    rails->spec = spec;
    rails->cross = opt.run.cross_rails;
    rails->found = rails_found(opt, spec, where.hosts[static_cast<std::size_t>(where.rank)]);
  }
  auto here_rdma = group || on_rails ? fabric::own_rdma{} : rdma_here(opt, addrs[static_cast<std::size_t>(where.rank)]);
  const auto& trouble = here_rdma.trouble;
  rep.adapter = here_rdma.port;
  auto start = meet_at_start(opt, where, addrs, where.rank == 0 ? new_run_id(env) : std::string(), trouble,
                             rails ? std::optional(words_of(rails->found)) : std::nullopt);
  rep.start_us = fabric::us_since(t0);
  if (env.contains("SLURM_JOB_ID") || where.rank == 0 || (start.error.empty() && !start.run.empty()))
    rep.run = env.contains("SLURM_JOB_ID") ? new_run_id(env) : start.run;
  std::vector<bool> came(static_cast<std::size_t>(n), true);
  if (start.error.empty()) {
    std::fill(came.begin(), came.end(), false);
    for (int r : start.present) came[static_cast<std::size_t>(r)] = true;
    came[static_cast<std::size_t>(where.rank)] = true;
    for (int r = 0; r < n; ++r)
      if (!came[static_cast<std::size_t>(r)]) rep.absent.push_back(r);
    rep.unable = start.unable;
  } else if (!trouble.empty()) {
    rep.unable = {{where.rank, trouble}};  // no meeting: only its own is known
  }
  if (rails) {
    // Rank 0's plan, unless there was none, or it names other rails than
    // the list every rank was given: then this rank's own.
    bool agreed = start.error.empty() && start.rails && start.rails->address.size() == where.hosts.size() &&
                  start.rails->seated(where.rank) &&
                  (spec.by == rail_spec::kind::automatic || start.rails->names == spec.items);
    rails->plan = agreed ? std::move(*start.rails) : plan_alone(spec, rails->found, where.rank, where.hosts);
    rep.rails = rails_of(*rails, where.rank);
  }
  auto ports = port_plan::of(opt.run.port, n, rails ? rails->plan.size() : 0, opt.run.cross_rails, intra);
  std::vector<std::string> unable(static_cast<std::size_t>(n));
  for (const auto& [r, why] : rep.unable) unable[static_cast<std::size_t>(r)] = why;
  con.line(start_text(start, rep, where, rails ? &*rails : nullptr));
  con.event("started", [&] {
    std::vector<std::string> absent_hosts;
    for (int r : rep.absent) absent_hosts.push_back(where.hosts[static_cast<std::size_t>(r)]);
    return nlohmann::json{{"rank", where.rank},
                          {"host", where.hosts[static_cast<std::size_t>(where.rank)]},
                          {"hosts", where.hosts},
                          {"rounds", rep.round_count},
                          {"run", fabric::value_or_null(rep.run)},
                          {"start_us", *rep.start_us},
                          {"absent", absent_hosts},
                          {"unable", unable_json(rep)},
                          {"peers", fabric::value_or_null(rep.peers)},
                          {"mtu", rep.adapter ? nlohmann::json(rep.adapter->active_mtu) : nlohmann::json(nullptr)},
                          {"adapter", rep.adapter ? adapter_json(*rep.adapter) : nlohmann::json(nullptr)},
                          {"rails", rails_json(rep)},
                          {"first_run", first_run_json(opt, rep)}};
  });
  if (rails && rails->plan.size() == 0)
    return {exit_code::no_device, "--rails: no rail to meet on: no host has an RDMA device with an Active port"};
  // Rails the ranks agreed on only now (auto) may need more ports a round
  // than --port leaves above it: every rank finds so alike.
  if (ports.cycle() < max_late_rounds + 2)
    fabric::cli::usage_error(fmt::format("--port {}: too few ports above it for the rounds of {} hosts on {} rails",
                                         opt.run.port, n, rails ? rails->plan.size() : 1));

  bool repeating = opt.run.repeat != 1;
  auto size = static_cast<std::uint64_t>(pair_size(opt.run));
  int earlier_rounds = 0;  // of earlier sweeps: the ports go on from there
  auto report_pair = [&](pair_result done) {
    done.sweep = rep.sweeps;
    if (rep.adapter) {
      done.port_guid = rep.adapter->port_guid;
      done.lid = rep.adapter->lid;
    }
    rep.pairs.push_back(std::move(done));
    con.line(pair_line(rep.pairs.back(), repeating, size));
    con.event("result", [&] { return pair_json(rep.pairs.back(), rep.pairs.size() - 1, rep.run); });
  };
  // The peers to meet that came, asked once now, so that one whose
  // process ends or stops later is known to be gone.
  std::optional<departures> gone;
  if (!group && !alone) {
    std::vector<int> peers;
    for (int r : peers_met(schedule, where))
      if (came[static_cast<std::size_t>(r)]) peers.push_back(r);
    gone.emplace(opt.run, addrs, where.rank, std::move(peers));
  }
  sweep_context ctx{opt, where, addrs, ports, rails ? &*rails : nullptr};
  // One pair of a round, on the address rule's rail, or on rails: each
  // group of its meetings all at once (rail i with rail i; --cross-rails,
  // a group a turn of the peer's rails), each meeting a thread of its own
  // kept to its rail's NUMA node before the check allocates its buffers;
  // `only`: the meetings to re-test.
  auto meet = [&](int round, const pairing& p, int late, bool retest, const std::vector<rail_meeting>* only) {
    if (p.server != where.rank && p.client != where.rank) return;
    int peer = p.server == where.rank ? p.client : p.server;
    int port_round = earlier_rounds + round;
    // Why the whole pair is not met, about whom: nothing while it is.
    auto unmet_why = [&]() -> std::pair<int, std::string> {
      auto name = [&where](int r) { return where.hosts[static_cast<std::size_t>(r)]; };
      if (!came[static_cast<std::size_t>(peer)]) return {peer, name(peer) + " did not come to the start"};
      for (int r : {p.server, p.client})
        if (!unable[static_cast<std::size_t>(r)].empty())
          return {r, fmt::format("{} cannot take part: {}", name(r), unable[static_cast<std::size_t>(r)])};
      if (auto why = gone->why_gone(peer, port_round)) return {peer, fmt::format("{} {}", name(peer), *why)};
      return {where.rank, {}};
    };
    if (!rails) {
      auto [who, why] = unmet_why();
      auto done = why.empty() ? run_pair(ctx, round, port_round, p, late, *gone, nullptr)
                              : unmet_pair(ctx, round, port_round, p, nullptr, who, std::move(why));
      // Done with this round's pair: a peer still waiting to meet it learns
      // so at its next question, and stops waiting.
      here->at(port_round + 1);
      done.retest = retest;
      report_pair(std::move(done));
      return;
    }
    auto groups = only ? meeting_groups(*only) : rail_meetings(rails->plan.size(), rails->cross);
    for (const auto& meetings : groups) {
      std::vector<pair_result> done(meetings.size());
      std::vector<std::size_t> met;
      auto [who, why] = unmet_why();
      for (std::size_t k = 0; k < meetings.size(); ++k) {
        const auto& m = meetings[k];
        if (why.empty()) {
          // A rail either side cannot use fails its meetings alone.
          if (auto cannot = rails->cannot(p.server, m.server, where.hosts); !cannot.empty())
            done[k] = unmet_pair(ctx, round, port_round, p, &m, p.server, std::move(cannot));
          else if (cannot = rails->cannot(p.client, m.client, where.hosts); !cannot.empty())
            done[k] = unmet_pair(ctx, round, port_round, p, &m, p.client, std::move(cannot));
          else
            met.push_back(k);
        } else {
          done[k] = unmet_pair(ctx, round, port_round, p, &m, who, why);
        }
      }
      auto ended = all_at_once(met.size(), [&](std::size_t i) {
        auto k = met[i];
        const auto& m = meetings[k];
        if (const auto* own = rails->own(where.rank == p.server ? m.server : m.client); own && !own->cpus.empty())
          fabric::keep_thread_to(own->cpus);
        done[k] = run_pair(ctx, round, port_round, p, late, *gone, &m);
      });
      for (const auto& e : ended)
        if (e) std::rethrow_exception(e);  // only what ends the run: run_pair keeps the rest in its result
      for (auto& d : done) {
        d.retest = retest;
        report_pair(std::move(d));
      }
    }
    here->at(port_round + 1);
  };
  for (;;) {
    auto started = fabric::clock::now();
    rep.pairs.clear();
    rep.retest_rounds = 0;
    rep.agreed.reset();
    // Rounds are not in lockstep: a live peer may still be in an earlier
    // round, waiting out a dead host there. A pair of round r allows its
    // peer to be r timeouts late (at most max_late_rounds), one more after
    // the first sweep: a peer may still be ending the sweep before.
    int behind = rep.sweeps > 0 ? 1 : 0;
    // The multicast check has one round of everyone at once.
    if (group) {
      agreement met;
      for (auto& p : run_group(opt, where, addrs, rep.sweeps, met)) report_pair(std::move(p));
    }
    int rounds = static_cast<int>(schedule.size());
    for (int round = 0; !group && round < rounds; ++round) {
      here->at(earlier_rounds + round);
      for (const auto& p : schedule[static_cast<std::size_t>(round)])
        meet(round, p, std::min(round + behind, max_late_rounds), false, nullptr);
    }
    // The host's own rails, after its rounds: the last round, no peer in it.
    if (intra) {
      if (here) here->at(earlier_rounds + rounds);
      for (auto& p : intra_round(opt, where, *rails, ports, rounds, earlier_rounds + rounds)) report_pair(std::move(p));
      if (here) here->at(earlier_rounds + rounds + 1);
    }
    // The outliers meet again, in extra rounds all ranks start together
    // from rank 0's answer. The report keeps the best of the meetings.
    if (!group && !alone && opt.run.retests > 0 && n >= 3) {
      judging by{rep.carried_bar, rep.adapter ? data_rate_gbps(rate_facts(*rep.adapter)).value_or(0) : 0};
      rep.agreed = rails ? agree_on_outliers(opt, where, addrs, rep.sweeps, rep.pairs, *gone, by, rails->plan.size(),
                                             rail_rates(*rails))
                         : agree_on_outliers(opt, where, addrs, rep.sweeps, rep.pairs, *gone, by);
      bool bw = measures_bandwidth(opt.run.check);
      const auto* on = rails ? &*rails : nullptr;
      con.line(agreement_text(*rep.agreed, where, bw, on));
      con.event("outliers", [&] { return agreement_json(*rep.agreed, where, rep.run, bw, on); });
      std::map<rank_pair, std::vector<rail_meeting>> again;
      for (const auto& r : rep.agreed->retest_rails) again[r.pair].push_back(r.rails);
      auto extra = pack_rounds(rep.agreed->retest);
      for (int attempt = 0; attempt < opt.run.retests; ++attempt)
        for (const auto& round : extra) {
          here->at(earlier_rounds + rep.round_count + rep.retest_rounds);
          for (const auto& p : round)
            meet(rep.round_count + rep.retest_rounds, p, 1, true, rails ? &again[{p.server, p.client}] : nullptr);
          ++rep.retest_rounds;
        }
    }
    earlier_rounds += rep.round_count + rep.retest_rounds;
    rep.elapsed_us = fabric::us_since(started);
    ++rep.sweeps;
    if (std::any_of(rep.pairs.begin(), rep.pairs.end(), [](const pair_result& p) { return !p.ok; })) ++rep.failed_sweeps;
    if (opt.run.repeat != 0 && rep.sweeps >= opt.run.repeat) break;
    // The next sweep starts --interval after this one started (at once
    // when this one took longer); Ctrl-C ends the wait.
    fabric::wait_readable(-1, fabric::deadline::at(started + std::chrono::milliseconds(opt.run.interval_ms)));
  }
  if (rep.failed_sweeps == 0) return {};
  std::size_t failed = 0;
  for (const auto& p : rep.pairs) failed += p.ok ? 0 : 1;
  if (!repeating) return {exit_code::test_failed, fmt::format("{} of {} pairs failed", failed, rep.pairs.size())};
  return {exit_code::test_failed, fmt::format("{} of {} sweeps had a failed pair ({} of {} pairs in the last)",
                                              rep.failed_sweeps, rep.sweeps, failed, rep.pairs.size())};
}

void to_json(nlohmann::json& j, const options& opt, const run_report& rep) {
  j["role"] = "rank";
  j["options"] = options_json(opt);
  nlohmann::json results = nlohmann::json::array();
  for (std::size_t i = 0; i < rep.pairs.size(); ++i) results.push_back(pair_json(rep.pairs[i], i, rep.run));
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
                  {"run", fabric::value_or_null(rep.run)},
                  {"start_us", fabric::value_or_null(rep.start_us)},
                  {"absent", absent_names(rep)},
                  {"unable", unable_json(rep)},
                  {"peers", fabric::value_or_null(rep.peers)},
                  {"adapter", rep.adapter ? adapter_json(*rep.adapter) : nlohmann::json(nullptr)},
                  {"rails", rails_json(rep)},
                  {"first_run", first_run_json(opt, rep)},
                  {"rounds", rep.round_count},
                  {"retest_rounds", rep.retest_rounds},
                  {"pairs", rep.pairs.size()},
                  {"failed", failed},
                  {"sweeps", rep.sweeps},
                  {"failed_sweeps", rep.failed_sweeps},
                  {"elapsed_us", fabric::value_or_null(rep.elapsed_us)}};
}

}  // namespace sweep
