#include "fabric/cm/rc.hpp"

#include "fabric/verbs/addr.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace fabric {


namespace {

peer_absent no_request_in_time(std::string_view who) {
  return peer_absent(exit_code::timeout, fmt::format("{}: timed out waiting for {}", who, event_name(RDMA_CM_EVENT_CONNECT_REQUEST)));
}

ibv_qp_init_attr rc_init_attr(ibv_cq* send_cq, ibv_cq* recv_cq, const rc_config& cfg) {
  ibv_qp_init_attr attr{};
  attr.qp_type = IBV_QPT_RC;
  attr.send_cq = send_cq;
  attr.recv_cq = recv_cq;
  attr.sq_sig_all = cfg.signal_all ? 1 : 0;
  attr.cap.max_send_wr = cfg.send_depth;
  attr.cap.max_recv_wr = cfg.recv_depth;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = cfg.max_inline;
  return attr;
}

void move_to_init(ibv_qp* qp, std::uint8_t port) {
  ibv_qp_attr init{};
  init.qp_state = IBV_QPS_INIT;
  init.pkey_index = 0;
  init.port_num = port;
  init.qp_access_flags = 0;
  check_ret(ibv_modify_qp(qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
            "ibv_modify_qp INIT");
}

}  // namespace

cm_qp create_rc_qp(rdma_cm_id* id, ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, const rc_config& cfg,
                   std::uint32_t* max_inline) {
  ibv_qp_init_attr attr = rc_init_attr(send_cq, recv_cq, cfg);
  int rc = rdma_create_qp(id, pd, &attr);
  if (rc != 0 && cfg.max_inline > 0) {
    // Providers may refuse inline data; plain sends work everywhere.
    attr.cap.max_inline_data = 0;
    rc = rdma_create_qp(id, pd, &attr);
  }
  check_rc(rc, "rdma_create_qp");
  if (max_inline) *max_inline = attr.cap.max_inline_data;
  return cm_qp(id);
}

verbs_qp create_unattached_rc_qp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, const rc_config& cfg,
                                 std::uint8_t port) {
  ibv_qp_init_attr attr = rc_init_attr(send_cq, recv_cq, cfg);
  verbs_qp qp(check_ptr(ibv_create_qp(pd, &attr), "ibv_create_qp"));
  move_to_init(qp.get(), port);
  return qp;
}

void ready_rc_qp(rdma_cm_id* id, ibv_qp* qp, rc_init init) {
  for (ibv_qp_state state : {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
    if (state == IBV_QPS_INIT && init == rc_init::as_made) continue;
    ibv_qp_attr attr{};
    int mask = 0;
    attr.qp_state = state;
    check_rc(rdma_init_qp_attr(id, &attr, &mask), "rdma_init_qp_attr");
    check_ret(ibv_modify_qp(qp, &attr, mask), "ibv_modify_qp");
  }
}

rc_endpoint::rc_endpoint(rdma_cm_id* id, const rc_config& cfg) : id_(id), cfg_(cfg) {
  if (!id->verbs) throw error(exit_code::no_device, "rdma_cm id is not bound to an RDMA device");
  pd_ = alloc_pd(id->verbs);
  int depth = static_cast<int>(cfg.send_depth + cfg.recv_depth);
  cq_ = std::make_unique<event_cq>(id->verbs, depth, cfg.busy_poll);

  ibv_qp_init_attr attr = rc_init_attr(cq_->get(), cq_->get(), cfg);
  if (cfg.self_created_qp) {
    own_qp_.reset(check_ptr(ibv_create_qp(pd_.get(), &attr), "ibv_create_qp"));
    move_to_init(own_qp_.get(), id->port_num);
  } else {
    cm_qp_ = create_rc_qp(id, pd_.get(), cq_->get(), cq_->get(), cfg, &max_inline_);
    return;
  }
  max_inline_ = attr.cap.max_inline_data;
}

rdma_conn_param rc_endpoint::conn_param() const noexcept {
  rdma_conn_param p{};
  p.responder_resources = 1;
  p.initiator_depth = 1;
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  if (own_qp_) p.qp_num = own_qp_->qp_num;
  return p;
}

void rc_endpoint::ready_self_created_qp() { ready_rc_qp(id_, own_qp_.get(), rc_init::again); }

void rc_endpoint::fail_self_created_qp() noexcept {
  if (!own_qp_) return;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  ibv_modify_qp(own_qp_.get(), &attr, IBV_QP_STATE);
}

rc_client prepare_rc_client(const rc_target& target, const rc_config& cfg, const wait_limit& limit) {
  addr_query q;
  q.node = target.addr;
  q.service = std::to_string(target.port);
  q.port_space = RDMA_PS_TCP;
  q.lookup_timeout = limit.each();
  resolved_pair addrs = resolve_pair(q, target.source);

  rc_client c;
  c.id = c.channel.create_id(RDMA_PS_TCP);
  resolve_addr_route(c.channel, c.id.get(), addrs.src_addr(), addrs.dst_addr(), limit);
  c.endpoint = std::make_unique<rc_endpoint>(c.id.get(), cfg);
  return c;
}

std::vector<std::byte> connect_rc(rc_client& c, const deadline& until, std::span<const std::byte> private_data) {
  rdma_conn_param param = c.endpoint->conn_param();
  param.private_data = private_data.data();
  param.private_data_len = static_cast<std::uint8_t>(private_data.size());
  std::string what = fmt::format("rdma_connect {}", format_addr(rdma_get_peer_addr(c.id.get())));
  check_rc(rdma_connect(c.id.get(), &param), what);
  if (c.endpoint->config().self_created_qp) {
    // Without a QP on the id, the CM stops at CONNECT_RESPONSE and leaves
    // the state changes and the RTU to us.
    auto response = c.channel.expect(RDMA_CM_EVENT_CONNECT_RESPONSE, until, what);
    c.endpoint->ready_self_created_qp();
    check_rc(rdma_establish(c.id.get()), "rdma_establish");
    return private_data_of(response);
  }
  return private_data_of(c.channel.expect(RDMA_CM_EVENT_ESTABLISHED, until, what));
}

cm_id listen_rc(cm_channel& channel, const std::string& addr, std::uint16_t port, int backlog) {
  return listen_on(channel, addr, port, RDMA_PS_TCP, backlog);
}

cm_id listen_on(cm_channel& channel, const std::string& addr, std::uint16_t port, rdma_port_space ps, int backlog) {
  sockaddr_storage local{};
  if (addr.empty()) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&local);
    sin->sin_family = AF_INET;
  } else {
    addr_query q;
    q.node = addr;
    q.flags = RAI_PASSIVE;
    q.port_space = ps;
    q.qp_type = ps == RDMA_PS_TCP ? IBV_QPT_RC : IBV_QPT_UD;
    auto info = resolve(q);
    local = copy_sockaddr(info->ai_src_addr);
  }
  auto* sa = reinterpret_cast<sockaddr*>(&local);
  set_sockaddr_port(sa, port);
  return listen_at(channel, sa, ps, backlog);
}

server_meeting await_client(const std::string& addr, std::uint16_t port, rdma_port_space ps, const pair_bounds& bounds,
                            std::string_view who) {
  cm_channel channel;
  // The kernel drops, unanswered, a request that finds the listener's
  // backlog full: the client's would wait out a CM retry (seconds) behind
  // one stranger's request not read yet. Room for many (0: the system's
  // most), each refused as it is read.
  cm_id listener = listen_on(channel, addr, port, ps, 0);
  // Until the pair is over: a stranger's request is refused on the way,
  // whatever the pair waits for then.
  channel.refuse_strangers(listener.get(), bounds.key);
  // The meeting's deadline moves on while the client is on its way; the
  // wait stops now and then to ask whether the client is gone.
  gone_check gone(bounds);
  for (auto until = bounds.meet;;) {
    if (auto request = next_request(channel, gone.asking_by(until), who)) {
      auto met = clock::now();
      return {std::move(channel), std::move(listener), std::move(*request), met, bounds.work_from_now()};
    }
    if (!until.expired()) {
      gone(who);
      continue;
    }
    auto later = bounds.later_meeting();
    if (!later) throw no_request_in_time(who);
    until = *later;
  }
}

std::optional<cm_event> next_request(cm_channel& channel, const deadline& until, std::string_view who) {
  auto request = channel.next(until);
  if (request && (request->type() != RDMA_CM_EVENT_CONNECT_REQUEST || request->status() != 0))
    throw event_error(*request, who);
  return request;
}

cm_event expect_request(cm_channel& channel, const deadline& until, std::string_view who) {
  auto request = next_request(channel, until, who);
  if (!request) throw no_request_in_time(who);
  return std::move(*request);
}

std::optional<std::size_t> wait_unless_peer_left(event_cq& cq, std::span<ibv_wc> out, cm_channel& channel,
                                                 const deadline& until, std::string_view peer) {
  for (;;) {
    auto n = cq.wait_or(out, channel.fd(), until);
    if (n > 0 || until.expired()) return n;
    // The channel is readable; nothing comes out of it when that was a
    // stranger's request, refused on the way: the wait goes on.
    auto ev = channel.try_next();
    if (!ev) continue;
    if (ev->type() == RDMA_CM_EVENT_DISCONNECTED) return std::nullopt;
    throw event_error(*ev, peer);
  }
}

cm_id server_meeting::take_client() {
  cm_id id(request.id());
  request.reset();
  return id;
}

cm_id listen_at(cm_channel& channel, const sockaddr* local, rdma_port_space ps, int backlog) {
  sockaddr_storage addr = copy_sockaddr(local);
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  cm_id id = channel.create_id(ps);
  std::string where = fmt::format("{}:{}", format_addr(sa), sockaddr_port(sa));
  check_rc(rdma_bind_addr(id.get(), sa), fmt::format("rdma_bind_addr {}", where));
  check_rc(rdma_listen(id.get(), backlog), fmt::format("rdma_listen {}", where));
  return id;
}

void send_accept(rdma_cm_id* id, rc_endpoint& ep, std::span<const std::byte> private_data) {
  if (ep.config().self_created_qp) ep.ready_self_created_qp();
  if (ep.config().self_created_qp || !private_data.empty()) {
    rdma_conn_param param = ep.conn_param();
    param.private_data = private_data.data();
    param.private_data_len = static_cast<std::uint8_t>(private_data.size());
    check_rc(rdma_accept(id, &param), "rdma_accept");
  } else {
    check_rc(rdma_accept(id, nullptr), "rdma_accept");
  }
}

void accept_rc(cm_channel& channel, rdma_cm_id* id, rc_endpoint& ep, const deadline& until,
               std::span<const std::byte> private_data) {
  send_accept(id, ep, private_data);
  channel.expect(RDMA_CM_EVENT_ESTABLISHED, until, fmt::format("rdma_accept {}", peer_name(id)));
}

}  // namespace fabric
