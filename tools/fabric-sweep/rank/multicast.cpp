// The multicast check: every host joins one group at once (mckey's flow),
// meets the others at rank 0, sends its datagrams and counts everyone's;
// a pair passes when each of the two heard all of the other's.
#include "fabric-sweep/rank/multicast.hpp"

#include "fabric/flows/group_exchange.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sweep {

std::vector<pair_result> run_group(const options& opt, const place& where, const std::vector<std::string>& addrs,
                                   int sweep, agreement& met) {
  const auto& r = opt.run;
  auto n = static_cast<std::uint32_t>(where.hosts.size());
  auto me = static_cast<std::uint32_t>(where.rank);
  auto t0 = fabric::clock::now();
  // The join's waits, each a wait of --timeout, all within a pair's time.
  auto joining = fabric::wait_limit(r.each_wait()).until(fabric::deadline::after(r.pair_timeout()));
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
    member.emplace(plan, joining);
  } catch (const fabric::error& e) {
    if (e.ends_run()) throw;
    failure = e.what();
  }
  // A rank that could not join still comes to the meeting: nobody waits
  // for it in vain.
  met = gather_everyone(opt, where, addrs, sweep);
  if (member && met.error.empty()) {
    try {
      heard = member->exchange(fabric::wait_limit(r.each_wait()).until(fabric::deadline::after(r.pair_timeout())));
    } catch (const fabric::error& e) {
      if (e.ends_run()) throw;
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
    p.received = heard->received[peer];
    p.lost = plan.count - heard->received[peer];
    p.ok = *p.lost == 0;
    if (!p.ok)
      p.error = fmt::format("{} heard {} of {}'s {} datagrams", where.hosts[me], heard->received[peer],
                            where.hosts[peer], plan.count);
  }
  return out;
}

}  // namespace sweep
