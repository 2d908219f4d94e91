#include "udaddy.hpp"

#include "fabric/verbs/addr.hpp"
#include "fabric/cm/cm.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/cm/ud.hpp"
#include "fabric/flows/ud_traffic.hpp"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <deque>
#include <memory>

namespace udaddy {

namespace {

using namespace fabric;
using std::chrono::milliseconds;

// rdma-core's udaddy gives address and route resolution 2 s each.
constexpr milliseconds resolve_timeout{2000};

struct connection {
  std::size_t index = 0;
  cm_id id;
  std::unique_ptr<ud_endpoint> ep;
  std::unique_ptr<ud_traffic> traffic;
  ud_destination peer;  // its AH must go before the endpoint's PD
  std::optional<ibv_gid> peer_gid;           // the source its datagrams carry
  std::optional<std::uint32_t> sender_qpn;   // the QP they come from, once known
  clock::time_point started;
};

class test_run {
public:
  test_run(const options& opt, report& rep, console& con) : opt_(opt), rep_(rep), con_(con) {}

  void execute() {
    describe();
    channel_.emplace();
    if (client()) {
      connect_all();
      if (opt_.count > 0) client_transfers();
    } else {
      accept_all();
      if (opt_.count > 0) server_transfers();
    }
  }

private:
  void say(std::string_view line) const { con_.line(line); }

  [[nodiscard]] bool client() const { return !opt_.server.empty(); }
  [[nodiscard]] std::uint64_t count() const { return opt_.size == 0 ? 0 : static_cast<std::uint64_t>(opt_.count); }
  connection_result& result(const connection& c) { return rep_.results[c.index]; }

  // The options, checked by validate(), in the form the run uses.
  void describe() {
    format_ = parse_format(opt_.format).value();
    ps_ = fabric::parse_port_space(opt_.port_space, opt_.port_space_number).value();
    if (!opt_.tos.empty()) {
      auto tos = fabric::cli::read_tos(opt_.tos);
      tos_ = tos.value;
      if (!tos.warning.empty()) con_.warning(tos.warning);
    }
    rep_.role = client() ? "client" : "server";
    rep_.size = static_cast<std::uint32_t>(opt_.size);
    con_.set_role(rep_.role);
  }

  addr_query query(const std::string& node, int extra_flags) const {
    addr_query q;
    q.node = node;
    q.service = std::to_string(opt_.port);
    q.flags = format_.flags | extra_flags;
    q.family = format_.family;
    q.port_space = ps_;
    q.qp_type = IBV_QPT_UD;
    return q;
  }

  connection& add_connection() {
    auto& c = conns_.emplace_back(std::make_unique<connection>());
    c->index = rep_.results.size();
    auto& r = rep_.results.emplace_back();
    r.index = c->index;
    return *c;
  }

  void make_endpoint(connection& c, const port_info& port) {
    rep_.mtu = port.path_mtu;
    if (count() > 0) check_ud_size(static_cast<std::size_t>(opt_.size), port);
    ud_config cfg;
    cfg.size = static_cast<std::uint32_t>(opt_.size);
    cfg = clamp_depths(cfg, count(), port);
    check_buffer_budget(cfg, static_cast<std::uint64_t>(opt_.connections));
    c.ep = std::make_unique<ud_endpoint>(c.id.get(), cfg);
    // The server learns where to reply from the first datagram of its
    // client: the host that asked for the connection; then only from the
    // QP that sent it. Anyone else's datagrams are counted, not used.
    auto learn_peer = [this, &c](const ibv_wc& wc, std::span<const std::byte>) {
      if (c.peer.ah) return;
      c.peer.ah = c.ep->create_reply_ah(wc);
      c.peer.qpn = (wc.wc_flags & IBV_WC_WITH_IMM) != 0 ? be32toh(wc.imm_data) : wc.src_qp;
      c.peer.qkey = c.ep->qkey();
      c.sender_qpn = wc.src_qp;
      result(c).remote_qpn = c.peer.qpn;
    };
    c.peer_gid = expected_source(c, port);
    auto from_peer = [&c](const ibv_wc& wc, const ibv_grh& grh) {
      return !c.peer_gid || from_source(wc, grh, *c.peer_gid, c.sender_qpn);
    };
    c.traffic = std::make_unique<ud_traffic>(*c.ep, count(), opt_.verify, fmt::format("connection {}", c.index),
                                             client() ? ud_traffic::receive_fn{} : learn_peer, from_peer);
    c.traffic->post_receives();
    result(c).qpn = c.ep->qpn();
  }

  /// The source GID the peer's datagrams carry: on RoCE the GID of its IP
  /// address, on InfiniBand the GID rdma_cm resolved for it; empty when
  /// unknown (then only the sending QP is checked).
  std::optional<ibv_gid> expected_source(const connection& c, const port_info& port) const {
    if (port.link_layer == IBV_LINK_LAYER_ETHERNET) return roce_gid_of(rdma_get_peer_addr(c.id.get()));
    const ibv_gid& gid = c.id->route.addr.addr.ibaddr.dgid;
    static constexpr ibv_gid zero{};
    if (std::memcmp(gid.raw, zero.raw, sizeof gid.raw) == 0) return std::nullopt;
    return gid;
  }

  void fail(connection& c, const error& e) {
    if (result(c).fail(e) && !first_error_) first_error_ = e;
  }

  // --- client ------------------------------------------------------------

  void connect_all() {
    say("udaddy: starting client");
    rai_ = resolve_pair(query(opt_.server, 0), opt_.bind);
    say("udaddy: connecting");
    for (int i = 0; i < opt_.connections; ++i) {
      auto& c = add_connection();
      c.id = channel_->create_id(ps_, &c);
      c.started = clock::now();
      check_rc(rdma_resolve_addr(c.id.get(), rai_.src_addr(), rai_.dst_addr(), static_cast<int>(resolve_timeout.count())),
               fmt::format("rdma_resolve_addr {}", printable(opt_.server)));
    }
    bool settled = settle_each<connection>(
        *channel_, conns_.size(), milliseconds(opt_.timeout_ms),
        [this](connection& c, const cm_event& ev) { return client_event(c, ev); },
        [this](connection& c, const error& e) { fail(c, e); });
    if (!settled)
      for (auto& c : conns_)
        if (result(*c).state == "pending")
          fail(*c, error(exit_code::timeout, fmt::format("connection {}: no answer from {} within {} ms", c->index,
                                                          printable(opt_.server), opt_.timeout_ms)));
    if (first_error_) throw *first_error_;
  }

  // Returns true when the connection reached its end (connected or failed).
  bool client_event(connection& c, const cm_event& ev) {
    switch (ev.type()) {
      case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (tos_) {
          std::uint8_t tos = *tos_;
          if (rdma_set_option(c.id.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos) != 0)
            con_.warning(fmt::format("cannot set the type of service: {}", std::strerror(errno)));
        }
        check_rc(rdma_resolve_route(c.id.get(), static_cast<int>(resolve_timeout.count())),
                 fmt::format("rdma_resolve_route {}", printable(opt_.server)));
        return false;
      case RDMA_CM_EVENT_ROUTE_RESOLVED: {
        make_endpoint(c, query_port(c.id.get()));
        rdma_conn_param param{};
        param.private_data = rai_.dst->ai_connect;
        param.private_data_len = static_cast<std::uint8_t>(rai_.dst->ai_connect_len);
        check_rc(rdma_connect(c.id.get(), &param), fmt::format("rdma_connect {}", printable(opt_.server)));
        return false;
      }
      case RDMA_CM_EVENT_ESTABLISHED: {
        const auto& ud = ev.ud();
        c.peer.ah = c.ep->create_ah(ud.ah_attr);
        c.peer.qpn = ud.qp_num;
        c.sender_qpn = ud.qp_num;
        c.peer.qkey = ud.qkey;
        auto& r = result(c);
        r.state = "connected";
        r.expected = count();
        r.remote_qpn = ud.qp_num;
        r.qkey = ud.qkey;
        r.setup_us = us_since(c.started);
        connected(r);
        return true;
      }
      case RDMA_CM_EVENT_ADDR_ERROR:
      case RDMA_CM_EVENT_ROUTE_ERROR:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_REJECTED:
        say(fmt::format("udaddy: event: {}, error: {}", ev.name(), ev.status()));
        // SIDR status 1: nothing listens on that service id.
        if (ev.type() == RDMA_CM_EVENT_UNREACHABLE && ev.status() == 1)
          fail(c, error(exit_code::connect_failed, fmt::format("connection {}: no udaddy server listens on {} port {}",
                                                               c.index, printable(opt_.server), opt_.port)));
        else
          fail(c, event_error(ev, fmt::format("connection {} to {}", c.index, printable(opt_.server))));
        return true;
      default:
        return false;
    }
  }

  void client_transfers() {
    say("initiating data transfers");
    auto t0 = clock::now();
    idle_deadline until(milliseconds(opt_.timeout_ms));
    for (auto& c : conns_) send(*c, until);
    say("receiving data transfers");
    receive_all(until);
    rep_.elapsed_us = us_since(t0);
    if (judge(rep_, opt_.connections).ok()) say("data transfers complete");
  }

  // --- server ------------------------------------------------------------

  void accept_all() {
    say("udaddy: starting server");
    listen_ = channel_->create_id(ps_, nullptr);
    auto rai = resolve(query(opt_.bind, RAI_PASSIVE));
    std::string where = opt_.bind.empty() ? fmt::format("port {}", opt_.port) : printable(opt_.bind);
    check_rc(rdma_bind_addr(listen_.get(), rai->ai_src_addr), fmt::format("rdma_bind_addr {}", where));
    // Bound to an address, the port is known: refuse an oversized -S before any client comes.
    if (listen_->verbs != nullptr && count() > 0) {
      auto port = query_port(listen_.get());
      rep_.mtu = port.path_mtu;
      check_ud_size(static_cast<std::size_t>(opt_.size), port);
    }
    check_rc(rdma_listen(listen_.get(), 0), fmt::format("rdma_listen {}", where));

    // A server waits for its first client as long as it takes (until
    // interrupted); once one came, the others get --timeout each.
    auto until = deadline::never();
    while (conns_.size() < static_cast<std::size_t>(opt_.connections)) {
      auto ev = channel_->next(until);
      if (!ev) break;
      until = deadline::after(milliseconds(opt_.timeout_ms));
      if (ev->type() != RDMA_CM_EVENT_CONNECT_REQUEST) continue;
      accept_one(*ev);
    }
  }

  void accept_one(cm_event& ev) {
    auto& c = add_connection();
    c.started = clock::now();
    c.id = cm_id(ev.id());
    c.id->context = &c;
    try {
      make_endpoint(c, query_port(c.id.get()));
      rdma_conn_param param{};
      param.qp_num = c.ep->qpn();
      check_rc(rdma_accept(c.id.get(), &param), "rdma_accept");
    } catch (const error& e) {
      say("udaddy: failing connection request");
      rdma_reject(c.id.get(), nullptr, 0);
      // The id can only be destroyed once its event is acknowledged.
      ev.reset();
      fail(c, e);
      throw;
    }
    auto& r = result(c);
    r.state = "connected";
    r.expected = count();
    r.qkey = c.ep->qkey();
    r.setup_us = us_since(c.started);
    connected(r);
  }

  void server_transfers() {
    say("receiving data transfers");
    auto t0 = clock::now();
    idle_deadline until(milliseconds(opt_.timeout_ms));
    receive_all(until);
    say("sending replies");
    until.touch();
    for (auto& c : conns_)
      if (c->peer.ah) send(*c, until);
    for (auto& c : conns_)
      if (c->traffic && !c->traffic->finish_sends(until))
        throw error(exit_code::timeout, fmt::format("connection {}: sends did not complete", c->index));
    rep_.elapsed_us = us_since(t0);
    if (judge(rep_, opt_.connections).ok()) say("data transfers complete");
  }

  // --- both ----------------------------------------------------------------

  void connected(const connection_result& r) {
    nlohmann::json e{{"index", r.index}, {"qkey", r.qkey.value_or(0)}, {"connect_us", r.setup_us.value_or(0)}};
    if (r.remote_qpn) e["remote_qpn"] = *r.remote_qpn;
    con_.event("connected", e);
  }

  void send(connection& c, idle_deadline& until) {
    bool done = c.traffic->send(c.peer, count(), until);
    result(c).sent = c.traffic->sent();
    if (!done) throw error(exit_code::timeout, fmt::format("connection {}: send queue stalled", c.index));
  }

  // A connection that stalls past the timeout ends the wait for all: the
  // others' datagrams are already in their CQs and are only drained.
  void receive_all(idle_deadline& until) {
    bool waiting = true;
    for (auto& c : conns_) {
      if (!c->traffic || result(*c).state != "connected") continue;
      if (waiting)
        waiting = c->traffic->receive_all(until);
      else
        c->traffic->drain();
      auto& r = result(*c);
      r.received = c->traffic->received();
      r.verify_errors = c->traffic->verify_errors();
      r.strangers = c->traffic->strangers();
      r.oversize = c->traffic->oversize();
      if (r.strangers > 0)
        con_.warning(fmt::format("connection {}: ignored {} datagrams from other senders", c->index, r.strangers));
      if (r.oversize > 0)
        con_.warning(fmt::format("connection {}: dropped {} datagrams larger than {} bytes (-S)", c->index, r.oversize,
                                 opt_.size));
    }
  }

  const options& opt_;
  report& rep_;
  console& con_;
  address_format format_;
  rdma_port_space ps_ = RDMA_PS_UDP;
  std::optional<std::uint8_t> tos_;
  std::optional<error> first_error_;
  // Teardown bottom-up: connections (AH, QP, ...), their ids, the listener,
  // the addresses, and the event channel last.
  std::optional<cm_channel> channel_;
  resolved_pair rai_;
  cm_id listen_;
  std::vector<std::unique_ptr<connection>> conns_;
};

}  // namespace

verdict run(const options& opt, report& rep, console& con) {
  test_run t(opt, rep, con);
  return run_ud_test(con, [&] { t.execute(); },
                     {.loss_lines = [&] { return loss_lines(rep); },
                      .stats_lines = [&] { return opt.stats ? stats_lines(rep, opt.connections) : std::vector<std::string>{}; },
                      .judge = [&] { return judge(rep, opt.connections); },
                      .emit_results = [&] {
                        for (const auto& r : rep.results) con.event("result", result_json(r));
                      }});
}

}  // namespace udaddy
