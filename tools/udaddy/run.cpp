#include "udaddy.hpp"

#include "fabric/cli/json_values.hpp"
#include "fabric/verbs/addr.hpp"
#include "fabric/cm/cm.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/cm/ud.hpp"
#include "fabric/flows/ud_run.hpp"
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

/// One connection: a member of the run, its outcome in the report.
struct connection final : ud_result_member<connection_result> {
  ud_destination peer;  // its AH must go before the endpoint's PD
  std::optional<ibv_gid> peer_gid;           // the source its datagrams carry
  std::optional<std::uint32_t> sender_qpn;   // the QP they come from, once known
  clock::time_point started;
  deadline resolving = deadline::at({});     // the end of its address's or route's wait (none yet: passed)

  [[nodiscard]] bool ready() const override { return result().state == "connected"; }
};

class test_run {
public:
  test_run(const options& opt, report& rep, console& con) : opt_(opt), rep_(rep), con_(con), run_(opt.timeout) {}

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

  // The options, checked by validate(), in the form the run uses.
  void describe() {
    format_ = parse_format(opt_.format).value();
    ps_ = fabric::parse_port_space(opt_.port_space, opt_.port_space_number).value();
    if (opt_.tos_read) {
      tos_ = opt_.tos_read->value;
      if (!opt_.tos_read->warning.empty()) con_.warning(opt_.tos_read->warning);
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
    q.lookup_timeout = opt_.timeout.each();
    return q;
  }

  connection& add_connection() {
    auto& c = run_.add();
    c.results = &rep_.results;
    rep_.results.emplace_back().index = c.index;
    return c;
  }

  void make_endpoint(connection& c, const port_info& port) {
    rep_.mtu = port.path_mtu;
    if (count() > 0) check_ud_size(static_cast<std::size_t>(opt_.size), port);
    ud_config cfg;
    cfg.size = static_cast<std::uint32_t>(opt_.size);
    cfg.keep_payloads = opt_.verify;  // only --verify reads what arrived
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
      c.result().remote_qpn = c.peer.qpn;
    };
    c.peer_gid = expected_source(c, port);
    auto from_peer = [&c](const ibv_wc& wc, const ibv_grh& grh) {
      return !c.peer_gid || from_source(wc, grh, *c.peer_gid, c.sender_qpn);
    };
    c.traffic = std::make_unique<ud_traffic>(*c.ep, count(), opt_.verify, fmt::format("connection {}", c.index),
                                             client() ? ud_traffic::receive_fn{} : learn_peer, from_peer);
    c.traffic->post_receives();
    c.result().qpn = c.ep->qpn();
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

  // --- client ------------------------------------------------------------

  void connect_all() {
    say("udaddy: starting client");
    rai_ = resolve_pair(query(opt_.server, 0), opt_.bind);
    say("udaddy: connecting");
    for (int i = 0; i < opt_.connections; ++i) {
      auto& c = add_connection();
      c.id = channel_->create_id(ps_, &c);
      c.started = clock::now();
      c.resolving = opt_.timeout.next_from(c.started);
      try_addr(c);
    }
    run_.settle(
        *channel_, [this](connection& c, const cm_event& ev) { return client_event(c, ev); },
        [this](const connection& c) {
          return fmt::format("connection {}: no answer from {} within {} ms", c.index, printable(opt_.server),
                             opt_.timeout.ms());
        });
  }

  // Address and route are asked of the kernel in tries (resolve_try),
  // each tried again within the wait (retry_resolution).
  void try_addr(connection& c) {
    check_rc(rdma_resolve_addr(c.id.get(), rai_.src_addr(), rai_.dst_addr(), resolve_try_ms(c.resolving)),
             fmt::format("rdma_resolve_addr {}", printable(opt_.server)));
  }
  void try_route(connection& c) {
    check_rc(rdma_resolve_route(c.id.get(), resolve_try_ms(c.resolving)),
             fmt::format("rdma_resolve_route {}", printable(opt_.server)));
  }

  // Returns true when the connection reached its end (connected or failed).
  bool client_event(connection& c, const cm_event& ev) {
    if (retry_resolution(ev, c.resolving)) {
      if (ev.type() == RDMA_CM_EVENT_ADDR_ERROR)
        try_addr(c);
      else
        try_route(c);
      return false;
    }
    switch (ev.type()) {
      case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (tos_) {
          std::uint8_t tos = *tos_;
          if (rdma_set_option(c.id.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos) != 0)
            con_.warning(fmt::format("cannot set the type of service: {}", std::strerror(errno)));
        }
        c.resolving = opt_.timeout.next();
        try_route(c);
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
        auto& r = c.result();
        r.state = "connected";
        r.peer = peer_name(c.id.get());
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
          run_.fail(c, error(exit_code::connect_failed, fmt::format("connection {}: no udaddy server listens on {} port {}",
                                                               c.index, printable(opt_.server), opt_.port)));
        else
          run_.fail(c, event_error(ev, fmt::format("connection {} to {}", c.index, printable(opt_.server))));
        return true;
      default:
        return false;
    }
  }

  void client_transfers() {
    say("initiating data transfers");
    auto t0 = clock::now();
    auto until = opt_.timeout.idle();
    for (const auto& c : run_.members()) run_.send(*c, c->peer, count(), until);
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
    while (run_.size() < static_cast<std::size_t>(opt_.connections)) {
      auto ev = channel_->next(until);
      if (!ev) break;
      until = opt_.timeout.next();
      if (ev->type() != RDMA_CM_EVENT_CONNECT_REQUEST) continue;
      accept_one(*ev);
    }
  }

  void accept_one(cm_event& ev) {
    auto& c = add_connection();
    c.started = clock::now();
    c.id = cm_id(ev.id());
    c.id->context = &c;
    c.result().peer = peer_name(c.id.get());
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
      run_.fail(c, e);
      throw;
    }
    auto& r = c.result();
    r.state = "connected";
    r.expected = count();
    r.qkey = c.ep->qkey();
    r.setup_us = us_since(c.started);
    connected(r);
  }

  void server_transfers() {
    say("receiving data transfers");
    auto t0 = clock::now();
    auto until = opt_.timeout.idle();
    receive_all(until, {channel_->fd(), [this] { answer_again(); }});
    say("sending replies");
    until.touch();
    for (const auto& c : run_.members())
      if (c->peer.ah) run_.send(*c, c->peer, count(), until);
    run_.finish_sends(until);
    rep_.elapsed_us = us_since(t0);
    if (judge(rep_, opt_.connections).ok()) say("data transfers complete");
  }

  // A client whose SIDR reply was lost asks again: it gets the QP of its
  // connection (the one from its address and port), as its first answer did.
  void answer_again() {
    answer_repeated_requests(
        *channel_,
        [this](const cm_event& ev) -> std::optional<std::uint32_t> {
          auto* c = connection_from(rdma_get_peer_addr(ev.id()));
          if (!c) return std::nullopt;
          return c->ep->qpn();
        },
        answered_again_);
  }

  /// The accepted connection whose client is at `peer` (address and port).
  connection* connection_from(const sockaddr* peer) const {
    for (const auto& c : run_.members()) {
      const auto* known = rdma_get_peer_addr(c->id.get());
      if (c->ep && sockaddr_port(known) == sockaddr_port(peer) && format_addr(known) == format_addr(peer)) return c.get();
    }
    return nullptr;
  }

  // --- both ----------------------------------------------------------------

  void connected(const connection_result& r) {
    // A server learns its client's QP only from its first datagram: null until then.
    con_.event("connected", [&] {
      return nlohmann::json{{"index", r.index},
                            {"peer", r.peer},
                            {"remote_qpn", value_or_null(r.remote_qpn)},
                            {"qkey", value_or_null(r.qkey)},
                            {"connect_us", value_or_null(r.setup_us)}};
    });
  }

  // The datagrams of every connection, then what came that was not ours.
  void receive_all(idle_deadline& until, const watched_fd& also = {}) {
    run_.receive(until, also);
    for (const auto& c : run_.members()) {
      const auto& r = c->result();
      if (r.strangers > 0)
        con_.warning(fmt::format("connection {}: ignored {} datagrams from other senders", c->index, r.strangers));
      if (auto w = oversize_warning(fmt::format("connection {}", c->index), r, rep_.size); !w.empty()) con_.warning(w);
    }
  }

  const options& opt_;
  report& rep_;
  console& con_;
  address_format format_;
  rdma_port_space ps_ = RDMA_PS_UDP;
  std::optional<std::uint8_t> tos_;
  // Teardown bottom-up: connections (AH, QP, ...), their ids, the listener,
  // the addresses, and the event channel last.
  std::optional<cm_channel> channel_;
  resolved_pair rai_;
  cm_id listen_;
  ud_run<connection> run_;
  std::vector<cm_id> answered_again_;  // requests asked again (answer_again)
};

}  // namespace

verdict run(const options& opt, report& rep, console& con) {
  test_run t(opt, rep, con);
  return run_ud_test(con, [&] { t.execute(); },
                     {.loss_lines = [&] { return loss_lines(rep); },
                      .stats_lines = [&] { return opt.stats ? stats_lines(rep, opt.connections) : std::vector<std::string>{}; },
                      .judge = [&] { return judge(rep, opt.connections); },
                      .emit_results = [&] {
                        for (const auto& r : rep.results) con.event("result", [&] { return result_json(r); });
                      }});
}

}  // namespace udaddy
