#include "fabric/flows/rc_connect.hpp"

#include "fabric/base/meet.hpp"
#include "fabric/cm/rc.hpp"

#include <fmt/format.h>

namespace fabric {

namespace {

/// A connection that carries nothing: the smallest queues a QP may have.
rc_config setup_config() {
  rc_config cfg;
  cfg.send_depth = 1;
  cfg.recv_depth = 1;
  return cfg;
}

/// One connection of the client, from its id's creation to ESTABLISHED;
/// then it is disconnected and torn down before the next one starts.
/// `replies` bounds the waits for the peer's answers, to the request and
/// to the disconnection; `limit` the rest. The request carries `key`.
double connect_once(const connect_plan& plan, const wait_limit& limit, const wait_limit& replies,
                    std::span<const std::byte> key, std::string& peer) {
  auto t0 = clock::now();
  rc_client c = prepare_rc_client({plan.addr, plan.source, plan.port}, setup_config(), limit);
  connect_rc(c, replies.next(), key);
  double setup_us = us_since(t0);
  peer = peer_name(c.id.get());
  check_rc(rdma_disconnect(c.id.get()), "rdma_disconnect");
  c.channel.expect(RDMA_CM_EVENT_DISCONNECTED, replies.next(), fmt::format("the disconnection from {}", peer));
  return setup_us;
}

}  // namespace

void accept_connections(const connect_plan& plan, const pair_bounds& bounds, connect_outcome& out) {
  // The first connection is the meeting, the rest the work.
  auto m = await_client(plan.addr, plan.port, RDMA_PS_TCP, bounds,
                        fmt::format("connection 1 of {} on port {}", plan.count, plan.port));
  auto& channel = m.channel;
  for (std::uint64_t i = 0; i < plan.count; ++i) {
    auto request = i == 0 ? std::move(m.request)
                          : expect_request(channel, m.work.next(),
                                           fmt::format("connection {} of {} on port {}", i + 1, plan.count, plan.port));
    cm_id id(request.id());
    request.reset();
    rc_endpoint ep(id.get(), setup_config());
    send_accept(id.get(), ep);
    out.peer = peer_name(id.get());
    // The client ends each connection before it makes the next. Its
    // disconnection may come without ESTABLISHED before it (the client's
    // RTU lost, or overtaken on the wire): a client disconnects only once
    // established, so that too is a connection made.
    auto ev = channel.expect_one_of({RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_DISCONNECTED}, m.work.next(),
                                    fmt::format("rdma_accept {}", out.peer));
    ++out.connected;
    if (ev.type() == RDMA_CM_EVENT_ESTABLISHED) {
      ev.reset();
      channel.expect(RDMA_CM_EVENT_DISCONNECTED, m.work.next(), fmt::format("{} to disconnect", out.peer));
    }
  }
  out.elapsed_us = us_since(m.met);
}

void make_connections(const connect_plan& plan, const pair_bounds& bounds, connect_outcome& out) {
  auto t0 = clock::now();
  // The first connection is the meeting, tried again while nothing listens
  // yet; its time counts from the attempt that got through.
  out.setup.add(dial_to_meet(bounds, [&](const wait_limit& meeting) {
    t0 = clock::now();
    return connect_once(plan, meeting, bounds.answer(), bounds.key, out.peer);
  }));
  ++out.connected;
  // Once a connection was made, a refusal is the answer.
  auto work = bounds.work_from_now();
  for (std::uint64_t i = 1; i < plan.count; ++i) {
    out.setup.add(connect_once(plan, work, work, bounds.key, out.peer));
    ++out.connected;
  }
  out.elapsed_us = us_since(t0);
}

}  // namespace fabric
