// Where the ranks meet rank 0: before the first round (so that the
// launcher's skew is never charged to a pair), before the multicast
// check's datagrams, and after the rounds to agree on the outliers. Every
// rank sends rank 0 one line over TCP to --port on rank 0's address (the
// rounds' rdma_cm ports are another port space), and rank 0 answers all
// it heard at once; every wait bounded, every line from a peer untrusted
// (meeting_lines.cpp).
#include "fabric-sweep/rank/meetings.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/base/meet.hpp"
#include "fabric/base/socket.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <sys/resource.h>
#include <sys/socket.h>

#include <ctime>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

namespace sweep {

using fabric::deadline;
using fabric::exit_code;
using fabric::unique_fd;

namespace {

/// A line of a big fleet's measurements fits well within this.
constexpr std::size_t max_line = std::size_t{1} << 20;
/// The sweep number of the meeting before the first round.
constexpr int start_sweep = -1;
/// Pair timeouts rank 0 waits for the ranks of a meeting (they may still
/// be at a pair's work); a rank waits one more for the answer.
constexpr int wait_timeouts = 4;

std::chrono::milliseconds timeouts(const options& opt, int k) { return opt.run.pair_timeout() * k; }

/// This rank's word with the figures of the pairs it measured: a latency
/// check's p50s as the client, a bw pair's lower direction; on rails,
/// each of a meeting on rails. A host's own rails (intra) are no pair of
/// the check's.
rank_word measured(const options& opt, const place& where, const std::vector<pair_result>& mine) {
  rank_word out{where.rank, {}, {}};
  for (const auto& p : mine) {
    if (p.retest || !p.ok || p.role != "client" || p.check != opt.run.check) continue;
    std::optional<double> figure;
    if (p.latency) figure = p.latency->p50;
    if (auto gbps = lower_gbps(p)) figure = gbps;
    if (!figure) continue;
    if (p.rails)
      out.rail_figures.push_back({{{p.server_rank, p.client_rank}, *figure}, *p.rails});
    else
      out.figures.push_back({{p.server_rank, p.client_rank}, *figure});
  }
  return out;
}

/// Whether this rank's pair with `peer` passed in the sweep's rounds.
bool met(const std::vector<pair_result>& mine, int peer) {
  return std::any_of(mine.begin(), mine.end(), [&](const pair_result& p) {
    return !p.retest && p.ok && (p.server_rank == peer || p.client_rank == peer);
  });
}

/// The most connections rank 0 holds at a meeting: every rank's, four
/// times over for a flood of strangers.
std::size_t max_connections(int n) { return 4 * static_cast<std::size_t>(n); }

/// Rank 0 holds every rank's connection until it answers them all at once:
/// a fleet of thousands needs more descriptors than the usual soft limit
/// of 1024. It is raised as far as that needs, within the hard limit.
void make_room_for(std::size_t connections) {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0) return;
  rlim_t wanted = connections + 64;  // the listener, the output, the libraries' own
  if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur < wanted) {
    files.rlim_cur = files.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, files.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
}

/// Rank 0: hears every rank of `expected` (others too, if they come in
/// time) until `until`, or until those not heard are gone (`gone`, when
/// given, asked once a gone_check_interval), names the outliers of its
/// times (`mine`) and theirs, and answers everyone heard at once.
agreement collect(const options& opt, const place& where, int sweep, std::set<int> expected, const rank_word& mine,
                  const std::string& run, const deadline& until, departures* gone = nullptr,
                  std::optional<double> carried = std::nullopt, int rails = 0) {
  int n = static_cast<int>(where.hosts.size());
  make_room_for(max_connections(n));
  auto listener = fabric::listen_tcp(static_cast<std::uint16_t>(opt.run.port));

  struct peer {
    unique_fd fd;
    std::string in;
    bool heard = false;
  };
  std::vector<std::unique_ptr<peer>> peers;
  std::set<int> heard;
  std::vector<measurement> all = mine.figures;
  std::vector<double> rates(static_cast<std::size_t>(n), 0.0);
  rates[0] = mine.rate_gbps;
  std::map<int, std::string> unable;
  if (!mine.trouble.empty()) unable[0] = mine.trouble;
  std::vector<std::optional<std::vector<rail_word>>> rail_words(static_cast<std::size_t>(n));
  rail_words[0] = mine.rails;
  std::vector<rail_figure> rail_all = mine.rail_figures;
  std::vector<std::vector<double>> rail_rates(static_cast<std::size_t>(n));
  rail_rates[0] = mine.rail_rates;
  // Out of descriptors (a hard limit below the fleet's size, or a flood),
  // rank 0 stops accepting until it closes one, rather than spin on a
  // listener it cannot take from; ranks left waiting then go without the
  // meeting, as if rank 0 were away.
  bool out_of_files = false;
  auto drop = [&](peer& p) {
    p.fd.reset();
    out_of_files = false;
  };
  // A rank that left or stopped since it met rank 0 will not come: its
  // wait would hold up every rank's answer.
  auto next_question = fabric::clock::now() + fabric::gone_check_interval;
  auto forget_the_gone = [&] {
    if (!gone || fabric::clock::now() < next_question) return;
    for (const auto& [r, why] : gone->gone_of({expected.begin(), expected.end()}, until)) expected.erase(r);
    next_question = fabric::clock::now() + fabric::gone_check_interval;
  };
  while (!expected.empty()) {
    forget_the_gone();
    if (expected.empty()) break;
    std::vector<int> fds{out_of_files ? -1 : listener.get()};
    std::vector<peer*> who{nullptr};
    for (auto& p : peers)
      if (p->fd && !p->heard) {
        fds.push_back(p->fd.get());
        who.push_back(p.get());
      }
    int i = fabric::wait_any(fds, gone ? until.min(deadline::at(next_question)) : until);
    if (i < 0 && until.expired()) break;
    if (i < 0) continue;
    if (i == 0) {
      unique_fd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!fd && (errno == EMFILE || errno == ENFILE)) out_of_files = true;
      // A flood of connections gets no more room than every rank four times.
      if (fd && peers.size() < max_connections(n)) peers.push_back(std::make_unique<peer>(peer{std::move(fd), {}, false}));
      continue;
    }
    auto& p = *who[static_cast<std::size_t>(i)];
    if (!fabric::read_some(p.fd.get(), p.in)) {
      drop(p);
      continue;
    }
    auto nl = p.in.find('\n');
    if (nl == std::string::npos) {
      if (p.in.size() > max_line) drop(p);
      continue;
    }
    auto said = read_rank_line(std::string_view(p.in).substr(0, nl), n, sweep, rails);
    if (!said || said->rank == 0 || heard.contains(said->rank)) {
      drop(p);
      continue;
    }
    heard.insert(said->rank);
    expected.erase(said->rank);
    all.insert(all.end(), said->figures.begin(), said->figures.end());
    rates[static_cast<std::size_t>(said->rank)] = said->rate_gbps;
    if (!said->trouble.empty()) unable[said->rank] = said->trouble;
    rail_words[static_cast<std::size_t>(said->rank)] = std::move(said->rails);
    rail_all.insert(rail_all.end(), said->rail_figures.begin(), said->rail_figures.end());
    rail_rates[static_cast<std::size_t>(said->rank)] = std::move(said->rail_rates);
    p.heard = true;
  }
  agreement a;
  fleet_bar bar;
  if (rails > 0) {
    a.retest_rails = rail_outliers(opt.run.check, rail_all, opt.verdict, bar, carried, rail_rates);
    for (const auto& r : a.retest_rails)
      if (a.retest.empty() || a.retest.back() != r.pair) a.retest.push_back(r.pair);
  } else {
    a.retest = outliers(opt.run.check, all, opt.verdict, bar, carried, rates);
  }
  if (mine.rails) a.rails = agree_rails(rail_spec_of(opt.run.rails), rail_words);
  a.fleet = bar.group;
  a.bar = bar.value;
  a.ranks_heard = static_cast<int>(heard.size()) + 1;
  a.run = run;
  a.present.push_back(0);
  a.present.insert(a.present.end(), heard.begin(), heard.end());
  a.unable.assign(unable.begin(), unable.end());
  auto line = agreement_line(a);
  auto answer_by = deadline::after(std::min(opt.run.each_wait(), std::chrono::milliseconds(2000)));
  for (auto& p : peers) {
    if (!p->heard || !p->fd) continue;
    try {
      fabric::send_all(p->fd.get(), line, answer_by);
    } catch (const fabric::error& e) {
      if (e.ends_run()) throw;  // one rank's loss is its own
    }
  }
  return a;
}

/// Any other rank: tells rank 0 what it measured and waits for the
/// answer until `until`, or until `gone` (when given) knows rank 0 is gone.
agreement ask(const options& opt, const place& where, const std::string& rank0, int sweep, const rank_word& mine,
              const deadline& until, departures* gone = nullptr, int rails = 0) {
  int n = static_cast<int>(where.hosts.size());
  unique_fd fd;
  try {
    fd = fabric::dial_tcp(rank0, static_cast<std::uint16_t>(opt.run.port), until);
  } catch (const fabric::error& e) {
    if (e.code() != exit_code::connect_failed && e.code() != exit_code::timeout) throw;
    throw fabric::error(exit_code::timeout, fmt::format("rank 0 ({}) did not listen in time", rank0));
  }
  fabric::send_all(fd.get(), rank_line(sweep, mine), until);
  std::string in;
  std::string line;
  // Rank 0 gone (asked once a gone_check_interval), its answer may still
  // have come just before: it is read if it is there.
  std::optional<std::string> rank0_gone;
  for (;;) {
    auto asking_by = rank0_gone ? deadline::after(std::chrono::milliseconds(0))
                     : gone     ? until.min(deadline::after(fabric::gone_check_interval))
                                : until;
    try {
      line = fabric::read_line(fd.get(), in, max_answer_bytes(n), asking_by);
      break;
    } catch (const fabric::error& e) {
      if (e.ends_run()) throw;
      if (rank0_gone) throw fabric::error(exit_code::timeout, fmt::format("rank 0 ({}) {}", rank0, *rank0_gone));
      if (e.code() != exit_code::timeout || until.expired() || !gone)
        throw fabric::error(e.code(), fmt::format("rank 0's answer: {}", e.what()));
    }
    rank0_gone = gone->why_gone(0);
  }
  auto a = read_agreement(line, n, rails);
  if (!a) throw fabric::error(exit_code::protocol, "rank 0's answer is not an agreement");
  return *a;
}

/// Runs one meeting; a failure is in agreement::error, never thrown (but Ctrl-C).
template <class Meet>
agreement bounded(Meet&& meet) {
  try {
    return meet();
  } catch (const fabric::error& e) {
    if (e.ends_run()) throw;
    agreement a;
    a.error = e.what();
    return a;
  }
}

std::set<int> everyone_but_rank0(const place& where) {
  std::set<int> out;
  for (int r = 1; r < static_cast<int>(where.hosts.size()); ++r) out.insert(r);
  return out;
}

}  // namespace

agreement agree_on_outliers(const options& opt, const place& where, const std::vector<std::string>& addrs,
                            int sweep, const std::vector<pair_result>& mine, departures& gone, const judging& by,
                            int rails, const std::vector<double>& rail_rates) {
  return bounded([&] {
    auto word = measured(opt, where, mine);
    word.rate_gbps = by.own_rate_gbps;
    word.rail_rates = rail_rates;
    if (where.rank != 0)
      // A rank that could not meet rank 0 in the rounds still tries, but not for long.
      return ask(opt, where, addrs.front(), sweep, word,
                 deadline::after(timeouts(opt, met(mine, 0) ? wait_timeouts + 1 : 1)), &gone, rails);
    std::set<int> expected;
    for (int r = 1; r < static_cast<int>(where.hosts.size()); ++r)
      if (met(mine, r)) expected.insert(r);
    return collect(opt, where, sweep, std::move(expected), word, {}, deadline::after(timeouts(opt, wait_timeouts)),
                   &gone, by.carried, rails);
  });
}

std::vector<rail_retest> rail_outliers(check c, const std::vector<rail_figure>& all, const verdict_options& o,
                                       fleet_bar& bar, std::optional<double> carried,
                                       const std::vector<std::vector<double>>& rates) {
  std::vector<double> figures;
  figure_hosts hosts;
  for (const auto& f : all) {
    figures.push_back(f.m.figure);
    hosts.emplace_back(static_cast<std::uint32_t>(f.m.pair.first), static_cast<std::uint32_t>(f.m.pair.second));
  }
  bar = bar_of(c, figures, o, hosts, carried);
  auto rate = [&](int r, int rail) -> std::optional<double> {
    if (r < 0 || static_cast<std::size_t>(r) >= rates.size()) return std::nullopt;
    const auto& mine = rates[static_cast<std::size_t>(r)];
    if (rail < 0 || static_cast<std::size_t>(rail) >= mine.size() || !(mine[static_cast<std::size_t>(rail)] > 0))
      return std::nullopt;
    return mine[static_cast<std::size_t>(rail)];
  };
  std::set<rail_retest> out;
  for (const auto& f : all) {
    std::optional<double> own;
    if (auto a = rate(f.m.pair.first, f.rails.server), b = rate(f.m.pair.second, f.rails.client); a && b)
      own = pair_bar(*a, *b, o);
    if (is_slow(c, f.m.figure, bar, own)) out.insert({f.m.pair, f.rails});
  }
  return {out.begin(), out.end()};
}

agreement gather_everyone(const options& opt, const place& where, const std::vector<std::string>& addrs, int sweep) {
  return bounded([&] {
    rank_word mine{where.rank, {}, {}};
    if (where.rank != 0) return ask(opt, where, addrs.front(), sweep, mine, deadline::after(timeouts(opt, wait_timeouts + 1)));
    return collect(opt, where, sweep, everyone_but_rank0(where), mine, {}, deadline::after(timeouts(opt, wait_timeouts)));
  });
}

agreement meet_at_start(const options& opt, const place& where, const std::vector<std::string>& addrs,
                        const std::string& run, const std::string& trouble,
                        const std::optional<std::vector<rail_word>>& rails) {
  return bounded([&] {
    rank_word mine{where.rank, {}, trouble};
    mine.rails = rails;
    if (where.rank != 0)
      return ask(opt, where, addrs.front(), start_sweep, mine, deadline::after(timeouts(opt, wait_timeouts + 1)));
    return collect(opt, where, start_sweep, everyone_but_rank0(where), mine, run,
                   deadline::after(timeouts(opt, wait_timeouts)));
  });
}

std::string new_run_id(const environment& env) {
  if (auto job = env.find("SLURM_JOB_ID"); job != env.end()) {
    auto step = env.find("SLURM_STEP_ID");
    return fmt::format("slurm-{}.{}", fabric::printable(job->second),
                       step == env.end() ? std::string("0") : fabric::printable(step->second));
  }
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&t, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z-{:08x}", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, ms % 1000, std::random_device{}());
}

}  // namespace sweep
