// The loop and the phases both sides share.
#include "session.hpp"

#include "fabric/base/idle_deadline.hpp"

#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace ucmatose {

using fabric::error;
using fabric::exit_code;

session::session(const options& o, report& r, fabric::console& con)
    : o_(o),
      r_(r),
      con_(con),
      count_(static_cast<std::uint32_t>(o.messages())),
      devices_(o),
      table_(r, con, o.timed()),
      exchange_(o, table_) {}

fabric::verdict session::verdict() const {
  auto failure = table_.first_failure();
  if (r_.established() == 0 && failure) return {failure->code(), failure->what()};
  if (!shortage_.empty()) return {exit_code::timeout, shortage_};
  return judge(r_);
}

void set_id_options(const options& o, fabric::console& con, rdma_cm_id* id, bool client) {
  if (client && o.tos) {
    auto tos = *o.tos;
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos) != 0)
      con.diagnostic(fmt::format("ucmatose: set TOS option failed: {}", std::strerror(errno)));
  }
  if (o.ack_timeout) {
    auto t = static_cast<std::uint8_t>(*o.ack_timeout);
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof t) != 0)
      con.diagnostic(fmt::format("ucmatose: set ack timeout option failed: {}", std::strerror(errno)));
  }
}

bool session::handle(fabric::cm_event& ev) {
  if (ev.type() == RDMA_CM_EVENT_CONNECT_REQUEST) return on_connect_request(ev);
  auto index = connection_table::index_of(ev.id());
  if (!index || ev.id() == listener_.get() || *index >= table_.size()) {
    if (ev.type() == RDMA_CM_EVENT_DEVICE_REMOVAL) throw fabric::event_error(ev, "listening");
    return false;  // the listener's, or a refused request's
  }
  std::size_t i = *index;
  auto& c = table_[i];
  try {
    // The kernel ended a try of the client's resolution: its flow asks again.
    if (fabric::retry_resolution(ev, c.resolving)) {
      on_flow_event(ev, i);
      return true;
    }
    switch (ev.type()) {
      case RDMA_CM_EVENT_ESTABLISHED:
        on_established(i);
        break;
      case RDMA_CM_EVENT_ADDR_ERROR:
      case RDMA_CM_EVENT_ROUTE_ERROR:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_REJECTED: {
        con_.line(fmt::format("cmatose: event: {}, error: {}", ev.name(), ev.status()));
        auto e = fabric::event_error(ev, c.st == conn_state::resolving_addr    ? "rdma_resolve_addr"
                                         : c.st == conn_state::resolving_route ? "rdma_resolve_route"
                                                                               : "connection");
        table_.fail(i, e.what(), e.code());
        break;
      }
      case RDMA_CM_EVENT_DISCONNECTED:
        on_disconnected(i);
        break;
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
        throw fabric::event_error(ev, "connection");
      default:
        on_flow_event(ev, i);
        break;
    }
  } catch (const error& e) {
    if (e.ends_run() ||
        ev.type() == RDMA_CM_EVENT_DEVICE_REMOVAL)
      throw;
    table_.fail(i, e.what(), e.code());
  }
  return true;
}

void session::on_established(std::size_t i) {
  auto now = table_.stamp();
  table_.finish(i, step::connect, now);
  table_.establish(i, now);
}

void session::take_qp(std::size_t i) {
  auto& c = table_[i];
  auto p = devices_.take_qp(i, c.id);
  c.dev = p.dev;
  c.qp = std::move(p.qp);
  c.qp_init = p.init;
  table_.record(i, step::create_qp, p.create_us);
}

void session::on_disconnected(std::size_t i) {
  auto& c = table_[i];
  c.disconnected = true;
  if (!c.disconnect_started) {
    // The peer started it: our part is to answer.
    table_.start(i, step::disconnect);
    c.disconnect_started = true;
    rdma_disconnect(c.id);
  }
  table_.finish(i, step::disconnect);
  if (c.st != conn_state::established)
    table_.fail(i, "peer disconnected before the connection was established", exit_code::connect_failed);
}

bool session::drive(const std::function<bool()>& done) {
  fabric::progress_timer timer(o_.timeout.each());
  std::vector<int> fds;
  auto on_completion = [this](const ibv_wc& wc) { exchange_.on_completion(wc); };
  for (;;) {
    // Completions are of the run's own work requests: each is progress.
    bool progressed = devices_.poll(on_completion);
    while (auto ev = events().try_next()) progressed |= handle(*ev);
    if (done()) return true;
    int wait_ms = timer.next_wait(progressed);
    if (wait_ms <= 0) return false;
    fds.clear();
    fds.push_back(events().fd());
    devices_.add_fds(fds);
    int ready = fabric::wait_any(fds, std::chrono::milliseconds(wait_ms));
    if (ready < 0) return false;
    if (ready > 0) devices_.consume(static_cast<std::size_t>(ready - 1));
  }
}

bool session::connect_phase(const std::function<bool()>& done) {
  if (drive(done)) return true;
  for (std::size_t i = 0; i < table_.size(); ++i) {
    auto st = table_[i].st;
    if (st == conn_state::established || st == conn_state::failed) continue;
    std::string_view waiting = st == conn_state::resolving_addr    ? "ADDR_RESOLVED"
                               : st == conn_state::resolving_route ? "ROUTE_RESOLVED"
                                                                   : "ESTABLISHED";
    table_.fail(i, fmt::format("timed out after {} ms waiting for {}", o_.timeout.ms(), waiting), exit_code::timeout);
  }
  return false;
}

bool session::after_setup() {
  table_.end_setup();
  if (!table_.setup_failed()) return true;
  disconnect_phase(true);
  destroy();
  return false;
}

void session::complete_phase(std::uint64_t connection::*done_count, std::string_view what) {
  auto finished = [&](std::size_t i) {
    const auto& c = table_[i];
    return c.st != conn_state::established || c.*done_count >= count_;
  };
  auto all_finished = [&] {
    for (std::size_t i = 0; i < table_.size(); ++i)
      if (!finished(i)) return false;
    return true;
  };
  if (drive(all_finished)) return;
  for (std::size_t i = 0; i < table_.size(); ++i)
    if (!finished(i))
      table_.fail(i,
                  fmt::format("timed out after {} ms with {} of {} messages {}", o_.timeout.ms(), table_[i].*done_count,
                              count_, what),
                  exit_code::timeout);
}

void session::post_all_sends() {
  for (std::size_t i = 0; i < table_.size(); ++i)
    if (table_[i].st == conn_state::established) exchange_.post_sends(i);
}

void session::migrate() {
  con_.line("migrating to new event channel");
  auto ch = std::make_unique<fabric::cm_channel>();
  if (listener_) ch->adopt(listener_.get());
  for (auto& id : ids_) ch->adopt(id.get());
  for (auto& id : refused_) ch->adopt(id.get());
  migrated_ = std::move(ch);
}

void session::start_disconnects() {
  for (std::size_t i = 0; i < table_.size(); ++i) {
    auto& c = table_[i];
    if (c.st != conn_state::established || c.disconnect_started) continue;
    table_.start(i, step::disconnect);
    c.disconnect_started = true;
    rdma_disconnect(c.id);
  }
}

void session::disconnect_phase(bool initiate) {
  auto all_done = [&] {
    for (std::size_t i = 0; i < table_.size(); ++i)
      if (table_[i].st == conn_state::established && !table_[i].disconnected) return false;
    return true;
  };
  if (initiate) start_disconnects();
  if (drive(all_done)) return;
  if (!initiate) {
    // The server never disconnected: do it ourselves, and say so.
    for (std::size_t i = 0; i < table_.size(); ++i)
      if (table_[i].st == conn_state::established && !table_[i].disconnected)
        table_.fail(i, fmt::format("timed out after {} ms waiting for the server to disconnect", o_.timeout.ms()),
                    exit_code::timeout);
    start_disconnects();
    if (drive(all_done)) return;
  }
  for (std::size_t i = 0; i < table_.size(); ++i)
    if (table_[i].st == conn_state::established && !table_[i].disconnected)
      table_.fail(i, fmt::format("timed out after {} ms waiting for DISCONNECTED", o_.timeout.ms()), exit_code::timeout);
}

void session::destroy() {
  std::vector<double> spent(table_.size());
  auto timed_reset = [&](std::size_t i, auto& handle) {
    auto t = table_.stamp();
    handle.reset();
    if (table_.timed()) spent[i] += fabric::us_since(t);
  };
  for (std::size_t i = 0; i < table_.size(); ++i) timed_reset(i, table_[i].qp);
  devices_.clear();
  for (std::size_t i = 0; i < table_.size() && i < ids_.size(); ++i) {
    timed_reset(i, ids_[i]);
    table_.record(i, step::destroy, spent[i]);
  }
  ids_.clear();
}

}  // namespace ucmatose
