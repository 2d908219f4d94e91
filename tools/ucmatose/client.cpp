// The client's flow and its own events.
#include "client.hpp"

#include "fabric/cm/rc.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace ucmatose {

using fabric::exit_code;

// A client listens on nothing: no request comes.
bool client::on_connect_request(fabric::cm_event& /*ev*/) { return false; }

void client::on_flow_event(fabric::cm_event& ev, std::size_t i) {
  if (ev.type() == RDMA_CM_EVENT_ADDR_RESOLVED) on_addr_resolved(i);
  if (ev.type() == RDMA_CM_EVENT_ROUTE_RESOLVED) on_route_resolved(i);
  if (ev.type() == RDMA_CM_EVENT_CONNECT_RESPONSE) on_connect_response(i);
  // A try the kernel ended within the wait (session::handle asked retry_resolution).
  if (ev.type() == RDMA_CM_EVENT_ADDR_ERROR) try_addr(i, fabric::resolve_try_ms(table_[i].resolving));
  if (ev.type() == RDMA_CM_EVENT_ROUTE_ERROR) try_route(i, fabric::resolve_try_ms(table_[i].resolving));
}

void client::on_addr_resolved(std::size_t i) {
  auto& c = table_[i];
  auto now = table_.stamp();
  table_.finish(i, step::resolve_addr, now);
  set_id_options(o_, con_, c.id, true);
  c.st = conn_state::resolving_route;
  table_.start(i, step::resolve_route, now);
  // The route's wait starts now; a tick's precision is enough for it, and
  // reading the coarse clock is no system call (a precise read is, under
  // emulation): unless steps are timed, setting a connection up reads no
  // precise clock.
  c.resolving = o_.timeout.next_from(fabric::coarse_now());
  try_route(i, fabric::resolve_try_ms(o_.timeout));
  // The device is known now (if it was not from the start): the QPs are
  // made ahead while routes resolve.
  devices_.start_helper(c.id->verbs, c.id->port_num);
}

// Address and route are asked of the kernel in tries (resolve_try), each
// tried again within the connection's wait.
void client::try_addr(std::size_t i, int ms) {
  fabric::check_rc(rdma_resolve_addr(table_[i].id, addrs_.src_addr(), addrs_.dst_addr(), ms), resolve_addr_what_);
}

void client::try_route(std::size_t i, int ms) {
  fabric::check_rc(rdma_resolve_route(table_[i].id, ms), "rdma_resolve_route");
}

void client::on_route_resolved(std::size_t i) {
  auto& c = table_[i];
  table_.finish(i, step::resolve_route);
  take_qp(i);
  rdma_conn_param param{};
  param.qp_num = c.qp->qp_num;
  param.responder_resources = 1;
  param.initiator_depth = 1;
  param.retry_count = 5;
  if (addrs_.dst) {
    param.private_data = addrs_.dst->ai_connect;
    param.private_data_len = static_cast<std::uint8_t>(addrs_.dst->ai_connect_len);
  }
  c.st = conn_state::connecting;
  table_.start(i, step::connect);
  fabric::check_rc(rdma_connect(c.id, &param), "rdma_connect");
}

// The server accepted: the QP goes to RTS and the RTU to the server, as
// librdmacm does for a QP on the id (which then reports ESTABLISHED).
void client::on_connect_response(std::size_t i) {
  auto& c = table_[i];
  fabric::ready_rc_qp(c.id, c.qp.get(), c.qp_init);
  fabric::check_rc(rdma_establish(c.id), "rdma_establish");
  on_established(i);
}

void client::run() {
  con_.line("cmatose: starting client");
  auto query = address_query(o_, o_.server, 0);
  addrs_ = fabric::resolve_pair(query, o_.bind);
  auto n = static_cast<std::size_t>(o_.connections);
  auto ps = static_cast<rdma_port_space>(query.port_space);
  table_.reserve(n);
  ids_.reserve(n);
  // With one RDMA device on the host, every connection will be on it: its
  // shared resources and every connection's QP are made before connecting
  // starts (here and on the helper thread at once), as the server makes
  // them before its clients come, so that setting up a connection costs
  // only its CM exchange. Otherwise the helper starts when the first
  // address resolves and makes them while the others are set up.
  if (ibv_context* verbs = fabric::sole_device()) {
    devices_.start_helper(verbs, 1);
    devices_.make_all_now();
  }
  std::string dst = fabric::format_addr(addrs_.dst_addr());
  std::string peer = fmt::format("{}:{}", dst, o_.port);
  resolve_addr_what_ = fmt::format("rdma_resolve_addr {}", dst);
  for (std::size_t i = 0; i < n; ++i) {
    auto t = table_.stamp();
    ids_.push_back(channel_.create_id(ps));
    table_.add(ids_.back().get(), peer, conn_state::resolving_addr);
    table_.start(i, step::create_id, t);
    table_.finish(i, step::create_id);
  }
  // As in the original, the ids exist before connecting starts: setup is
  // timed from the first address resolution.
  con_.line("cmatose: connecting");
  table_.begin_setup(table_.stamp());
  table_.set_pending(n);
  auto resolving = o_.timeout.next();
  int first_try = fabric::resolve_try_ms(o_.timeout);
  for (std::size_t i = 0; i < n; ++i) {
    table_.start(i, step::resolve_addr);
    table_[i].resolving = resolving;
    try {
      try_addr(i, first_try);
    } catch (const fabric::error& e) {
      table_.fail(i, e.what(), e.code());
    }
  }
  connect_phase([&] { return table_.pending() == 0; });
  if (!after_setup()) return;
  if (count_ > 0) {
    con_.line("receiving data transfers");
    complete_phase(&connection::recv_done, "received");
    con_.line("sending replies");
    post_all_sends();
    complete_phase(&connection::send_done, "sent");
    con_.line("data transfers complete");
  }
  if (o_.migrate) migrate();
  disconnect_phase(false);
  destroy();
}

}  // namespace ucmatose
