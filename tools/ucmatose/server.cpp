// The server's flow and its own events.
#include "server.hpp"

#include "fabric/cm/rc.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>

namespace ucmatose {

using fabric::error;
using fabric::exit_code;

bool server::on_connect_request(fabric::cm_event& ev) {
  fabric::cm_id id(ev.id());
  auto wanted = static_cast<std::size_t>(o_.connections);
  if (!accepting_ || table_.size() >= wanted) {
    con_.line("cmatose: failing connection request");
    rdma_reject(id.get(), nullptr, 0);
    // The id goes once its event is acknowledged, with the others.
    refused_.push_back(std::move(id));
    return false;
  }
  if (table_.empty()) table_.begin_setup(table_.stamp());
  auto peer = fabric::peer_name(id.get());
  std::size_t i = table_.add(id.get(), std::move(peer), conn_state::connecting);
  ids_.push_back(std::move(id));
  table_.set_pending(table_.pending() + 1);
  auto& c = table_[i];
  try {
    take_qp(i);
    set_id_options(o_, con_, c.id, false);
    table_.start(i, step::connect);
    // As librdmacm's rdma_accept does the QP of an id, and with what its
    // defaults send: initiator depth and responder resources as the
    // client's request and the device allow, full retries.
    fabric::ready_rc_qp(c.id, c.qp.get(), c.qp_init);
    rdma_conn_param param{};
    param.responder_resources = RDMA_MAX_RESP_RES;
    param.initiator_depth = RDMA_MAX_INIT_DEPTH;
    param.retry_count = 7;
    param.rnr_retry_count = 7;
    param.qp_num = c.qp->qp_num;
    fabric::check_rc(rdma_accept(c.id, &param), "rdma_accept");
  } catch (const error& e) {
    if (e.ends_run()) throw;
    con_.line("cmatose: failing connection request");
    rdma_reject(c.id, nullptr, 0);
    table_.fail(i, e.what(), e.code());
  }
  return true;
}

// The client's events (address and route resolution) never come here.
void server::on_flow_event(fabric::cm_event& /*ev*/, std::size_t /*i*/) {}

void server::connect_phase() {
  // A server waits for its first client as long as it takes.
  while (table_.empty()) {
    if (auto ev = events().next(fabric::deadline::never())) handle(*ev);
  }
  auto wanted = static_cast<std::size_t>(o_.connections);
  session::connect_phase([&] { return table_.size() == wanted && table_.pending() == 0; });
  // Clients that come later are refused: the ones that came are served.
  accepting_ = false;
  if (table_.size() < wanted) {
    shortage_ = fmt::format("timed out after {} ms with {} of {} clients connected", o_.timeout.ms(), table_.size(),
                            wanted);
    table_.fail_run(shortage_, exit_code::timeout);
  }
}

void server::run() {
  con_.line("cmatose: starting server");
  auto local = fabric::resolve(address_query(o_, o_.bind, RAI_PASSIVE));
  listener_ = fabric::listen_at(channel_, local->ai_src_addr, static_cast<rdma_port_space>(local->ai_port_space), 0);
  table_.reserve(static_cast<std::size_t>(o_.connections));
  // The expected clients' QPs are made ahead, while nobody waits, so that
  // accepting costs only the CM exchange. Which device a client comes in
  // on is known ahead only for a bound listener or a host with one device;
  // otherwise a QP is made when its client comes.
  if (ibv_context* verbs = listener_->verbs ? listener_->verbs : fabric::sole_device())
    devices_.start_helper(verbs, listener_->verbs ? listener_->port_num : 1);
  connect_phase();
  if (!after_setup()) return;
  if (count_ > 0) {
    con_.line("initiating data transfers");
    post_all_sends();
    con_.line("completing sends");
    complete_phase(&connection::send_done, "sent");
    con_.line("receiving data transfers");
    complete_phase(&connection::recv_done, "received");
    con_.line("data transfers complete");
  }
  if (o_.migrate) migrate();
  con_.line("cmatose: disconnecting");
  disconnect_phase(true);
  con_.line("disconnected");
  destroy();
}

}  // namespace ucmatose
