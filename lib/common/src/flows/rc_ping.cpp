#include "fabric/flows/rc_ping.hpp"

#include "fabric/base/meet.hpp"

#include <fmt/format.h>

#include <array>

namespace fabric {

namespace {

constexpr std::uint64_t recv_id = 1, send_id = 2;

rc_config ping_config() {
  rc_config cfg;
  cfg.send_depth = 2;
  cfg.recv_depth = 2;
  cfg.signal_all = true;
  return cfg;
}

void post_recv(rc_endpoint& ep, registered_buffer& buf, std::uint32_t size) {
  ibv_sge sge = buf.sge(size);
  ibv_recv_wr wr{}, *bad = nullptr;
  wr.wr_id = recv_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  check_ret(ibv_post_recv(ep.qp(), &wr, &bad), "ibv_post_recv");
}

void post_send(rc_endpoint& ep, registered_buffer& buf, std::uint32_t size) {
  ibv_sge sge = buf.sge(size);
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = send_id;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  check_ret(ibv_post_send(ep.qp(), &wr, &bad), "ibv_post_send");
}

/// The sends that must have completed before send `i` is posted: all but
/// the one before it. A reply proves that its ping arrived, so neither side
/// waits for its last send's completion (the peer's ACK, which may come
/// late or be lost) before it goes on; two sends in flight at most.
constexpr std::uint64_t sends_before(std::uint64_t i) { return i == 0 ? 0 : i - 1; }

/// Counts the completions of one connection's sends and receives, which
/// may come in either order.
class completions {
public:
  completions(rc_endpoint& ep, std::string peer) : ep_(ep), peer_(std::move(peer)) {}

  /// Waits until `sends` sends and `recvs` receives have completed in all.
  void wait_for(std::uint64_t sends, std::uint64_t recvs, const deadline& until) {
    std::array<ibv_wc, 4> wcs{};
    while (sends_ < sends || recvs_ < recvs) {
      auto n = ep_.cq().wait(wcs, until);
      if (n == 0) throw timed_out(recvs);
      take(std::span(wcs.data(), n));
    }
  }

  /// The server's last wait: its last reply's completion, or the client's
  /// DISCONNECTED (a client leaves once it has every reply).
  void wait_for_last(std::uint64_t sends, cm_channel& channel, const deadline& until) {
    std::array<ibv_wc, 4> wcs{};
    while (sends_ < sends) {
      auto n = wait_unless_peer_left(ep_.cq(), wcs, channel, until, peer_);
      if (!n) return;
      if (*n == 0) throw timed_out(recvs_);
      take(std::span(wcs.data(), *n));
    }
  }

  [[nodiscard]] const std::string& peer() const noexcept { return peer_; }

private:
  void take(std::span<const ibv_wc> wcs) {
    for (const auto& wc : wcs) {
      if (wc.status != IBV_WC_SUCCESS)
        throw error(exit_code::connect_failed, fmt::format("{}: {} failed: {}", peer_, wc.wr_id == recv_id ? "receive" : "send",
                                                           ibv_wc_status_str(wc.status)));
      ++(wc.wr_id == recv_id ? recvs_ : sends_);
    }
  }
  [[nodiscard]] error timed_out(std::uint64_t recvs) const {
    return error(exit_code::timeout, fmt::format("{}: {} in time", peer_, recvs_ < recvs ? "no ping back" : "no send completion"));
  }

  rc_endpoint& ep_;
  std::string peer_;
  std::uint64_t sends_ = 0, recvs_ = 0;
};

}  // namespace

void serve_pings(const ping_plan& plan, const pair_bounds& bounds, ping_outcome& out) {
  auto m = await_client(plan.addr, plan.port, RDMA_PS_TCP, bounds, fmt::format("a client on port {}", plan.port));
  cm_id id = m.take_client();
  rc_endpoint ep(id.get(), ping_config());
  registered_buffer buf(ep.pd(), plan.size, IBV_ACCESS_LOCAL_WRITE);
  post_recv(ep, buf, plan.size);
  accept_rc(m.channel, id.get(), ep, m.work.next());
  out.connect_us = us_since(m.met);
  out.peer = peer_name(id.get());
  completions done(ep, out.peer);
  for (std::uint64_t i = 0; i < plan.count; ++i) {
    done.wait_for(sends_before(i), i + 1, m.work.next());
    if (i + 1 < plan.count) post_recv(ep, buf, plan.size);
    post_send(ep, buf, plan.size);
    ++out.exchanged;
  }
  done.wait_for_last(plan.count, m.channel, m.work.next());
  rdma_disconnect(id.get());
}

void send_pings(const ping_plan& plan, const pair_bounds& bounds, ping_outcome& out) {
  auto t0 = clock::now();
  struct connected {
    rc_client c;
    registered_buffer buf;  // destroyed before the connection's PD
  };
  auto link = dial_to_meet(bounds, [&](const wait_limit& meeting) {
    connected made{prepare_rc_client({plan.addr, plan.source, plan.port}, ping_config(), meeting), {}};
    made.buf = registered_buffer(made.c.endpoint->pd(), plan.size, IBV_ACCESS_LOCAL_WRITE);
    post_recv(*made.c.endpoint, made.buf, plan.size);
    connect_rc(made.c, bounds.answer().next(), bounds.key);
    return made;
  });
  auto work = bounds.work_from_now();
  auto& ep = *link.c.endpoint;
  out.connect_us = us_since(t0);
  out.peer = peer_name(link.c.id.get());
  completions done(ep, out.peer);
  for (std::uint64_t i = 0; i < plan.count; ++i) {
    done.wait_for(sends_before(i), i, work.next());
    auto sent = clock::now();
    post_send(ep, link.buf, plan.size);
    done.wait_for(0, i + 1, work.next());
    out.rtt.add(us_since(sent));
    ++out.exchanged;
    if (i + 1 < plan.count) post_recv(ep, link.buf, plan.size);
  }
  rdma_disconnect(link.c.id.get());
}

}  // namespace fabric
