#include "fabric/flows/ud_ping.hpp"

#include "fabric/verbs/addr.hpp"
#include "fabric/cm/cm.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/meet.hpp"
#include "fabric/cm/rc.hpp"
#include "fabric/cm/ud.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <vector>

#include <endian.h>

namespace fabric {

namespace {

/// Receive slots: a late reply or a stranger's datagram never leaves the
/// endpoint without a slot for the next one.
constexpr std::uint32_t recv_slots = 8;
/// Send slots of the server, which may echo a few datagrams at once.
constexpr std::uint32_t echo_slots = 8;
/// Bytes of the datagram's number at its start.
constexpr std::uint32_t number_bytes = sizeof(std::uint64_t);
/// How long a client waits for the server's SIDR answer before it sends
/// another request beside the first: the kernel asks again only after some
/// 4 s, so a lost answer would fail a pair whose --timeout is shorter.
constexpr std::chrono::milliseconds ask_again_after{1000};

std::uint32_t datagram_bytes(const datagram_plan& plan) { return std::max(plan.size, number_bytes); }

std::uint64_t number_of(std::span<const std::byte> payload) {
  std::uint64_t n = 0;
  std::memcpy(&n, payload.data(), number_bytes);
  return n;
}

/// Throws for a completion that ends the exchange: a failed send, or a
/// receive flushed because the QP broke. Any other failed receive (none
/// is expected: every receive holds what the port can deliver) is taken
/// for a stranger's: false, and its slot goes back.
bool usable(const ibv_wc& wc, const std::string& peer) {
  if (wc.status == IBV_WC_SUCCESS) return true;
  if (!ud_endpoint::is_send(wc) && wc.status != IBV_WC_WR_FLUSH_ERR) return false;
  throw error(exit_code::connect_failed, fmt::format("{}: {} failed: {}", peer, ud_endpoint::is_send(wc) ? "send" : "receive",
                                                     ibv_wc_status_str(wc.status)));
}

/// The length of a receive's payload, or nullopt for a datagram too short
/// to carry a number.
std::optional<std::size_t> payload_length(const ibv_wc& wc) {
  if (wc.byte_len < grh_bytes + number_bytes) return std::nullopt;
  return wc.byte_len - grh_bytes;
}

/// The client's endpoint once the server accepted it.
struct ud_client {
  cm_channel channel;
  cm_id id;
  std::unique_ptr<ud_endpoint> ep;   // destroyed before the id
  ud_destination server;             // destroyed before the endpoint's PD
};

/// One SIDR exchange: resolves, creates the endpoint, and asks the server
/// (the request carrying `key`), waiting for its answer as long as
/// `answer` allows; every ask_again_after without one, another request
/// goes (the server answers each request with the pair's key alike), and
/// the first answer stands. A server that does not listen yet throws
/// error(connect_failed).
std::unique_ptr<ud_client> connect_once(const datagram_plan& plan, const wait_limit& limit, const wait_limit& answer,
                                        std::span<const std::byte> key) {
  addr_query q;
  q.node = plan.addr;
  q.service = std::to_string(plan.port);
  q.port_space = RDMA_PS_UDP;
  q.qp_type = IBV_QPT_UD;
  q.lookup_timeout = limit.each();
  resolved_pair addrs = resolve_pair(q, plan.source);

  auto c = std::make_unique<ud_client>();
  c->id = c->channel.create_id(RDMA_PS_UDP);
  resolve_addr_route(c->channel, c->id.get(), addrs.src_addr(), addrs.dst_addr(), limit);
  auto port = query_port(c->id.get());
  check_ud_size(datagram_bytes(plan), port);
  c->ep = std::make_unique<ud_endpoint>(c->id.get(), ud_config{.size = datagram_bytes(plan), .send_depth = 1, .recv_depth = recv_slots});
  c->ep->post_recvs(recv_slots);
  rdma_conn_param param{};
  param.private_data = key.data();
  param.private_data_len = static_cast<std::uint8_t>(key.size());
  std::string what = fmt::format("the UD server at {} port {}", printable(plan.addr), plan.port);
  check_rc(rdma_connect(c->id.get(), &param), fmt::format("rdma_connect {}", printable(plan.addr)));
  // Further requests: each resolved on a channel of its own (within the
  // answer's wait), then moved to the client's, where its answer comes as
  // the first request's would. One that cannot be made leaves the others
  // to be answered.
  std::vector<cm_id> asked_again;
  auto ask_again = [&](const deadline& answer_by) {
    try {
      cm_channel resolving;
      cm_id again = resolving.create_id(RDMA_PS_UDP);
      resolve_addr_route(resolving, again.get(), addrs.src_addr(), addrs.dst_addr(), limit.until(answer_by));
      c->channel.adopt(again.get());
      check_rc(rdma_connect(again.get(), &param), fmt::format("rdma_connect {}", printable(plan.addr)));
      asked_again.push_back(std::move(again));
    } catch (const error& e) {
      if (e.ends_run()) throw;
    }
  };
  for (auto answer_by = answer.next(), again_at = deadline::after(ask_again_after);;) {
    auto ev = c->channel.next(answer_by.min(again_at));
    if (!ev && answer_by.expired()) throw error(exit_code::timeout, fmt::format("no answer from {} in time", what));
    if (!ev) {
      ask_again(answer_by);
      again_at = deadline::after(ask_again_after);
      continue;
    }
    if (ev->type() == RDMA_CM_EVENT_ESTABLISHED) {
      const auto& ud = ev->ud();
      c->server.ah = c->ep->create_ah(ud.ah_attr);
      c->server.qpn = ud.qp_num;
      c->server.qkey = ud.qkey;
      return c;
    }
    // SIDR status 1: nothing listens there (yet).
    if (ev->type() == RDMA_CM_EVENT_UNREACHABLE || ev->type() == RDMA_CM_EVENT_REJECTED)
      throw error(exit_code::connect_failed, fmt::format("{}: {} (status {})", what, ev->name(), ev->status()));
    throw event_error(*ev, what);
  }
}

}  // namespace

void serve_datagrams(const datagram_plan& plan, const pair_bounds& bounds, datagram_outcome& out) {
  const auto size = datagram_bytes(plan);
  auto m = await_client(plan.addr, plan.port, RDMA_PS_UDP, bounds, fmt::format("a UD client on port {}", plan.port));
  const auto& work = m.work;
  cm_id id = m.take_client();
  auto port = query_port(id.get());
  out.peer = peer_name(id.get());
  try {
    check_ud_size(size, port);
  } catch (const error&) {
    rdma_reject(id.get(), nullptr, 0);
    throw;
  }
  ud_endpoint ep(id.get(), ud_config{.size = size, .send_depth = echo_slots, .recv_depth = recv_slots});
  ep.post_recvs(recv_slots);
  rdma_conn_param param{};
  param.qp_num = ep.qpn();
  check_rc(rdma_accept(id.get(), &param), "rdma_accept");
  out.connect_us = us_since(m.met);

  // Only the client's QP is answered: it is learned from its first
  // datagram (the QPN its immediate data names), from the host that asked.
  auto expected_gid = port.link_layer == IBV_LINK_LAYER_ETHERNET ? roce_gid_of(rdma_get_peer_addr(id.get())) : std::nullopt;
  std::optional<std::uint32_t> sender;
  ud_destination client;
  std::array<bool, echo_slots> busy{};
  std::uint32_t next_slot = 0;
  const auto idle = plan.reply_timeout * 4;
  std::array<ibv_wc, 8> wcs{};
  std::vector<cm_id> answered_again;
  bool last_came = false;
  // Until the first datagram, a wait of its own; then the client's silence
  // for `idle`, however many strangers' datagrams come meanwhile.
  auto quiet = work.next();
  while (!last_came) {
    // Until the first datagram, the client may not have our answer.
    auto n = out.received == 0 ? ep.cq().wait_or(wcs, m.channel.fd(), quiet) : ep.cq().wait(wcs, quiet);
    if (n == 0 && out.received == 0 && !quiet.expired()) {
      auto answered_before = answered_again.size();
      answer_repeated_requests(
          m.channel,
          [&](const cm_event& ev) {
            return carries_key(private_data_of(ev), bounds.key) ? std::optional(ep.qpn()) : std::nullopt;
          },
          answered_again);
      // A client that asked again is on its way: its first datagram has
      // another wait (anyone else's request is refused, and moves nothing).
      if (answered_again.size() > answered_before) quiet = work.next();
      continue;
    }
    auto silent = [&] {
      if (out.received == 0) throw error(exit_code::timeout, fmt::format("{}: no datagram in time", out.peer));
    };
    if (n == 0) {
      silent();
      break;  // the client is done, or gone
    }
    auto received_before = out.received;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& wc = wcs[i];
      bool good = usable(wc, out.peer);
      if (ud_endpoint::is_send(wc)) {
        busy[ud_endpoint::slot_of(wc)] = false;
        continue;
      }
      auto slot = ud_endpoint::slot_of(wc);
      if (good && oversize(wc.byte_len, size)) {
        ++out.oversize;
        ep.post_recv(slot);
        continue;
      }
      auto length = payload_length(wc);
      auto grh = ep.grh(slot);
      if (!good || !length || (expected_gid && !from_source(wc, grh, *expected_gid, sender)) || (sender && wc.src_qp != *sender)) {
        ++out.strangers;
        ep.post_recv(slot);
        continue;
      }
      if (!sender) {
        sender = wc.src_qp;
        client.ah = ep.create_reply_ah(wc);
        client.qpn = (wc.wc_flags & IBV_WC_WITH_IMM) != 0 ? be32toh(wc.imm_data) : wc.src_qp;
        client.qkey = ep.qkey();
      }
      auto payload = ep.payload(slot, std::min<std::size_t>(*length, size));
      auto number = number_of(payload);
      // Every send slot busy: the sends of a moment ago complete first.
      while (busy[next_slot]) {
        std::array<ibv_wc, 1> sent{};
        if (ep.cq().wait(sent, work.next()) == 0) throw error(exit_code::timeout, fmt::format("{}: sends did not complete", out.peer));
        usable(sent[0], out.peer);
        if (ud_endpoint::is_send(sent[0])) busy[ud_endpoint::slot_of(sent[0])] = false;
        else ep.post_recv(ud_endpoint::slot_of(sent[0]));  // a datagram while the queue is full: dropped
      }
      auto out_slot = ep.send_slot(next_slot);
      std::fill(out_slot.begin(), out_slot.end(), std::byte{0});
      std::copy(payload.begin(), payload.end(), out_slot.begin());
      ep.post_recv(slot);
      ep.post_send(client, next_slot, true);
      busy[next_slot] = true;
      next_slot = (next_slot + 1) % echo_slots;
      ++out.received;
      ++out.sent;
      if (number + 1 >= plan.count) last_came = true;
    }
    if (out.received > received_before) {
      quiet = deadline::after(idle).min(work.next());
    } else if (quiet.expired()) {
      silent();
      break;
    }
  }
  // Let the last replies leave before the QP goes.
  for (auto deadline_left = deadline::after(plan.reply_timeout).min(work.next());
       std::any_of(busy.begin(), busy.end(), [](bool b) { return b; });) {
    auto n = ep.cq().wait(wcs, deadline_left);
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i)
      if (ud_endpoint::is_send(wcs[i])) busy[ud_endpoint::slot_of(wcs[i])] = false;
  }
}

void send_datagrams(const datagram_plan& plan, const pair_bounds& bounds, datagram_outcome& out) {
  auto t0 = clock::now();
  auto c = dial_to_meet(bounds, [&](const wait_limit& meeting) {
    return connect_once(plan, meeting, bounds.answer(), bounds.key);
  });
  auto work = bounds.work_from_now();
  out.connect_us = us_since(t0);
  out.peer = peer_name(c->id.get());
  auto& ep = *c->ep;
  auto slot = ep.send_slot(0);
  std::array<ibv_wc, 8> wcs{};
  for (std::uint64_t number = 0; number < plan.count && !work.expired(); ++number) {
    std::fill(slot.begin(), slot.end(), std::byte{0});
    std::memcpy(slot.data(), &number, number_bytes);
    auto sent_at = clock::now();
    ep.post_send(c->server, 0, true);
    ++out.sent;
    bool send_done = false, reply = false;
    auto send_until = work.next();
    auto wait_until = deadline::after(plan.reply_timeout).min(send_until);
    // The reply, or its time is up, whatever strangers send meanwhile; the
    // send always completes first.
    while (!send_done || !reply) {
      const auto& until = send_done ? wait_until : send_until;
      auto n = ep.cq().wait(wcs, until);
      auto time_up = [&] {
        if (!send_done) throw error(exit_code::timeout, fmt::format("{}: the send did not complete", out.peer));
      };
      if (n == 0) {
        time_up();
        break;  // lost
      }
      bool progress = false;
      for (std::size_t i = 0; i < n; ++i) {
        const auto& wc = wcs[i];
        bool good = usable(wc, out.peer);
        if (ud_endpoint::is_send(wc)) {
          send_done = progress = true;
          continue;
        }
        auto rslot = ud_endpoint::slot_of(wc);
        auto length = payload_length(wc);
        if (good && oversize(wc.byte_len, datagram_bytes(plan))) {
          ++out.oversize;
        } else if (!good || !length || wc.src_qp != c->server.qpn) {
          ++out.strangers;
        } else if (number_of(ep.payload(rslot, *length)) == number && !reply) {
          out.rtt.add(us_since(sent_at));
          ++out.received;
          reply = progress = true;
        }
        // A late reply to an earlier datagram is dropped with the rest.
        ep.post_recv(rslot);
      }
      if (!progress && until.expired()) {
        time_up();
        break;  // lost
      }
    }
  }
}

}  // namespace fabric
