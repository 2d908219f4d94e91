#include "fabric/flows/group_exchange.hpp"

#include "fabric/verbs/addr.hpp"
#include "fabric/base/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace fabric {

namespace {

/// What starts every datagram of the exchange: "FSMC", the sender's
/// number, the datagram's number.
constexpr std::array<std::byte, 4> magic{std::byte{'F'}, std::byte{'S'}, std::byte{'M'}, std::byte{'C'}};
constexpr std::uint32_t header_bytes = 16;

struct tag {
  std::uint32_t member = 0;
  std::uint64_t number = 0;
};

void write_tag(std::span<std::byte> out, const tag& t) {
  std::fill(out.begin(), out.end(), std::byte{0});
  std::copy(magic.begin(), magic.end(), out.begin());
  std::memcpy(out.data() + 4, &t.member, sizeof t.member);
  std::memcpy(out.data() + 8, &t.number, sizeof t.number);
}

std::optional<tag> read_tag(std::span<const std::byte> in) {
  if (in.size() < header_bytes || !std::equal(magic.begin(), magic.end(), in.begin())) return std::nullopt;
  tag t;
  std::memcpy(&t.member, in.data() + 4, sizeof t.member);
  std::memcpy(&t.number, in.data() + 8, sizeof t.number);
  return t;
}

}  // namespace

struct group_member::state {
  group_plan plan;
  cm_channel channel;
  cm_id id;
  std::unique_ptr<ud_endpoint> ep;  // destroyed before the id
  multicast_membership membership;  // left before the endpoint goes
  ud_destination group;             // destroyed before the endpoint's PD
  double join_us = 0;
};

group_member::group_member(const group_plan& plan, const wait_limit& limit) : s_(std::make_unique<state>()) {
  auto& s = *s_;
  // Each member keeps a bit for every datagram of every member.
  if (plan.members > 0 && plan.count > (std::uint64_t{1} << 28) / plan.members)
    throw error(exit_code::usage, fmt::format("{} members x {} datagrams are too many to count: lower -C",
                                              plan.members, plan.count));
  s.plan = plan;
  s.plan.size = std::max(plan.size, header_bytes);
  addr_query q;
  q.node = plan.group;
  q.port_space = RDMA_PS_UDP;
  q.qp_type = IBV_QPT_UD;
  q.lookup_timeout = limit.each();
  resolved_pair addrs = resolve_pair(q, plan.local);
  s.id = s.channel.create_id(RDMA_PS_UDP);
  std::string what = fmt::format("joining {}", printable(plan.group));
  resolve_addr(s.channel, s.id.get(), addrs.src_addr(), addrs.dst_addr(), limit);

  auto port = query_port(s.id.get());
  port.path_mtu = port.active_mtu;
  check_ud_size(s.plan.size, port);
  // A receive for every datagram of every other member, as far as the
  // device allows: datagrams have no flow control.
  ud_config cfg;
  cfg.size = s.plan.size;
  cfg = clamp_depths(cfg, plan.count * std::max<std::uint32_t>(plan.members, 1), port);
  cfg.send_depth = 1;
  check_buffer_budget(cfg, 1);
  s.ep = std::make_unique<ud_endpoint>(s.id.get(), cfg);
  s.ep->post_recvs(cfg.recv_depth);

  auto t0 = clock::now();
  s.membership = join_multicast(s.id.get(), addrs.dst_addr(), join_mode::full_member);
  for (;;) {
    auto ev = s.channel.next(limit.next());
    if (!ev) throw error(exit_code::timeout, fmt::format("{}: no MULTICAST_JOIN in time", what));
    if (ev->type() == RDMA_CM_EVENT_MULTICAST_JOIN) {
      s.group = group_destination(*s.ep, joined_group(*ev));
      break;
    }
    if (ev->type() == RDMA_CM_EVENT_MULTICAST_ERROR || ev->type() == RDMA_CM_EVENT_ADDR_ERROR) throw event_error(*ev, what);
  }
  s.join_us = us_since(t0);
}

group_member::~group_member() = default;

double group_member::join_us() const noexcept { return s_->join_us; }

group_outcome group_member::exchange(const wait_limit& limit) {
  auto& s = *s_;
  const auto& plan = s.plan;
  auto& ep = *s.ep;
  group_outcome out;
  out.join_us = s.join_us;
  out.received.assign(plan.members, 0);
  std::vector<std::vector<bool>> seen(plan.members, std::vector<bool>(plan.count, false));
  auto all_heard = [&] {
    for (std::uint32_t m = 0; m < plan.members; ++m)
      if (m != plan.member && out.received[m] < plan.count) return false;
    return true;
  };
  auto last_heard = clock::now();
  // Handles completions; true when this member's send completed.
  auto handle = [&](std::span<const ibv_wc> wcs) {
    bool sent = false;
    for (const auto& wc : wcs) {
      if (ud_endpoint::is_send(wc)) {
        if (wc.status != IBV_WC_SUCCESS)
          throw error(exit_code::connect_failed, fmt::format("send to {} failed: {}", printable(plan.group), ibv_wc_status_str(wc.status)));
        sent = true;
        continue;
      }
      auto slot = ud_endpoint::slot_of(wc);
      if (wc.status == IBV_WC_WR_FLUSH_ERR)
        throw error(exit_code::connect_failed, fmt::format("receives from {} flushed", printable(plan.group)));
      if (wc.status == IBV_WC_SUCCESS && oversize(wc.byte_len, plan.size)) {
        ++out.oversize;
        ep.post_recv(slot);
        continue;
      }
      std::optional<tag> t;
      if (wc.status == IBV_WC_SUCCESS && wc.byte_len >= grh_bytes + header_bytes)
        t = read_tag(ep.payload(slot, wc.byte_len - grh_bytes));
      ep.post_recv(slot);
      if (!t || t->member >= plan.members || t->number >= plan.count) {
        ++out.strangers;
        continue;
      }
      if (t->member == plan.member) continue;  // our own, looped back
      if (!seen[t->member][t->number]) {  // a datagram again is no news
        last_heard = clock::now();
        seen[t->member][t->number] = true;
        ++out.received[t->member];
      }
    }
    return sent;
  };

  std::array<ibv_wc, 16> wcs{};
  auto slot = ep.send_slot(0);
  for (std::uint64_t number = 0; number < plan.count && !limit.expired(); ++number) {
    write_tag(slot, {plan.member, number});
    ep.post_send(s.group, 0, true);
    ++out.sent;
    // Others' datagrams meanwhile do not move the wait's end.
    auto until = limit.next();
    for (bool sent = false; !sent;) {
      auto n = ep.cq().wait(wcs, until);
      if (n > 0) sent = handle(std::span(wcs.data(), n));
      if (n == 0 || (!sent && until.expired()))
        throw error(exit_code::timeout, fmt::format("sends to {} did not complete", printable(plan.group)));
    }
  }
  last_heard = std::max(last_heard, clock::now());
  // Until every member was heard, or none for plan.quiet: strangers'
  // datagrams, however many, end the wait as silence would.
  while (!all_heard()) {
    auto quiet_end = deadline::at(last_heard + plan.quiet).min(limit.next());
    auto n = ep.cq().wait(wcs, quiet_end);
    if (n == 0) break;
    handle(std::span(wcs.data(), n));
    if (deadline::at(last_heard + plan.quiet).expired() || limit.expired()) break;
  }
  return out;
}

}  // namespace fabric
