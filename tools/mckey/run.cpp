#include "mckey.hpp"

#include "fabric/verbs/addr.hpp"
#include "fabric/cm/cm.hpp"
#include "fabric/cm/multicast.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/cm/ud.hpp"
#include "fabric/flows/ud_run.hpp"
#include "fabric/flows/ud_traffic.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <infiniband/ib.h>

#include <chrono>
#include <cstdio>
#include <memory>

namespace mckey {

namespace {

using namespace fabric;
using std::chrono::milliseconds;

/// One QP that joins the group: a member of the run, its outcome in the report.
struct member final : ud_result_member<qp_result> {
  multicast_membership membership;  // leaves before the QP and the id go
  ud_destination group;             // its AH goes before the endpoint's PD
  clock::time_point join_started;
  deadline resolving = deadline::at({});   // the end of its group address's wait (none yet: passed)

  [[nodiscard]] bool ready() const override { return result().state == "joined"; }
};

class test_run {
public:
  test_run(const options& opt, report& rep, console& con) : opt_(opt), rep_(rep), con_(con), run_(opt.timeout) {}

  void execute() {
    describe();
    channel_.emplace();
    join_all();
    if (count() > 0) {
      if (opt_.sender)
        send_all();
      else
        receive_all();
    }
  }

private:
  void say(std::string_view line) const { con_.line(line); }

  [[nodiscard]] std::uint64_t count() const { return opt_.size == 0 ? 0 : static_cast<std::uint64_t>(opt_.count); }

  // The options, checked by validate(), in the form the run uses.
  void describe() {
    ps_ = parse_port_space("", opt_.port_space_number).value();
    unmapped_ = !opt_.unmapped_group.empty();
    // Only named in messages, and the user's own text: escaped once here.
    group_ = printable(unmapped_ ? opt_.unmapped_group : opt_.group);
    rep_.role = opt_.sender ? "sender" : "receiver";
    rep_.size = static_cast<std::uint32_t>(opt_.size);
    con_.set_role(rep_.role);
  }

  sockaddr* src() { return opt_.bind.empty() ? nullptr : reinterpret_cast<sockaddr*>(&src_); }
  sockaddr* dst() { return reinterpret_cast<sockaddr*>(&dst_); }

  void resolve_group() {
    if (!opt_.bind.empty()) src_ = resolve_ip(opt_.bind, opt_.timeout.each());
    if (unmapped_) {
      sockaddr_ib sib{};
      sib.sib_family = AF_IB;
      if (inet_pton(AF_INET6, opt_.unmapped_group.c_str(), &sib.sib_addr) != 1)
        throw error(exit_code::usage, fmt::format("-M {}: not a GID", group_));
      dst_ = copy_sockaddr(reinterpret_cast<sockaddr*>(&sib));
    } else {
      dst_ = resolve_ip(opt_.group, opt_.timeout.each());
    }
  }

  // AF_IB groups and groups the SA assigns exist only on InfiniBand: say
  // so, naming the port, instead of the kernel's bare errno.
  void check_infiniband_only(rdma_cm_id* bound) {
    std::string request;
    if (unmapped_)
      request = fmt::format("-M {}: an unmapped (AF_IB) multicast group", group_);
    else if (is_unspecified_group(dst()))
      request = fmt::format("-m {}: a group assigned by the subnet administrator", group_);
    else
      return;
    auto ports = bound != nullptr && bound->verbs != nullptr ? std::vector<port_info>{query_port(bound)} : all_ports();
    if (auto problem = infiniband_only_problem(request, ports)) throw error(exit_code::no_device, *problem);
  }

  void join_all() {
    say(fmt::format("mckey: starting {}", opt_.sender ? "client" : "server"));
    resolve_group();
    say("mckey: joining");
    for (int i = 0; i < opt_.connections; ++i) {
      auto& m = run_.add();
      m.results = &rep_.results;
      rep_.results.emplace_back().index = m.index;
      m.id = channel_->create_id(ps_, &m);
      if (src()) check_rc(rdma_bind_addr(m.id.get(), src()), fmt::format("rdma_bind_addr {}", printable(opt_.bind)));
      check_infiniband_only(m.id.get());
      if (unmapped_)
        start_join(m);
      else {
        m.resolving = opt_.timeout.next();
        try_addr(m);
      }
    }

    run_.settle(
        *channel_, [this](member& m, const cm_event& ev) { return join_event(m, ev); },
        [this](const member& m) { return fmt::format("qp {}: no join of {} within {} ms", m.index, group_, opt_.timeout.ms()); });
  }

  // The group's address is asked of the kernel in tries (resolve_try),
  // each tried again within the wait (retry_resolution).
  void try_addr(member& m) {
    check_rc(rdma_resolve_addr(m.id.get(), src(), dst(), resolve_try_ms(m.resolving)),
             fmt::format("rdma_resolve_addr {}", group_));
  }

  void start_join(member& m) {
    auto port = query_port(m.id.get());
    rep_.mtu = port.active_mtu;
    rep_.link_layer = std::string(link_layer_name(port.link_layer));
    if (count() > 0) {
      port.path_mtu = port.active_mtu;
      check_ud_size(static_cast<std::size_t>(opt_.size), port);
    }
    ud_config cfg;
    cfg.size = static_cast<std::uint32_t>(opt_.size);
    cfg.block_self_loopback = opt_.no_loopback;
    cfg.keep_payloads = opt_.verify;  // only --verify reads what arrived
    cfg = clamp_depths(cfg, count(), port);
    check_buffer_budget(cfg, static_cast<std::uint64_t>(opt_.connections));
    m.ep = std::make_unique<ud_endpoint>(m.id.get(), cfg);
    auto& r = m.result();
    r.qpn = m.ep->qpn();
    if (opt_.no_loopback) {
      r.loopback_blocked = m.ep->loopback_blocked();
      if (!m.ep->loopback_blocked() && !loopback_warned_) {
        loopback_warned_ = true;
        con_.warning(m.ep->loopback_note());
      }
    }
    m.traffic = std::make_unique<ud_traffic>(*m.ep, opt_.sender ? 0 : count(), opt_.verify, fmt::format("qp {}", m.index));
    if (!opt_.sender) m.traffic->post_receives();
    m.join_started = clock::now();
    m.membership = join_multicast(m.id.get(), dst(),
                                  opt_.send_only ? join_mode::send_only_full_member : join_mode::full_member, &m);
  }

  // Returns true when the QP reached its end (joined or failed).
  bool join_event(member& m, const cm_event& ev) {
    if (retry_resolution(ev, m.resolving)) {
      try_addr(m);
      return false;
    }
    switch (ev.type()) {
      case RDMA_CM_EVENT_ADDR_RESOLVED:
        start_join(m);
        return false;
      case RDMA_CM_EVENT_MULTICAST_JOIN: {
        auto g = joined_group(ev);
        auto& r = m.result();
        r.setup_us = us_since(m.join_started);
        r.dgid = g.dgid;
        r.mlid = g.mlid;
        r.sl = g.sl;
        r.remote_qpn = g.qpn;
        r.qkey = g.qkey;
        say(joined_line(r));
        con_.event("joined", [&] {
          return nlohmann::json{{"index", r.index},
                                {"dgid", g.dgid},
                                {"mlid", g.mlid},
                                {"sl", g.sl},
                                {"remote_qpn", g.qpn},
                                {"qkey", g.qkey},
                                {"join_us", *r.setup_us}};
        });
        m.group = group_destination(*m.ep, g);
        r.state = "joined";
        r.expected = opt_.sender ? 0 : count();
        return true;
      }
      case RDMA_CM_EVENT_ADDR_ERROR:
      case RDMA_CM_EVENT_ROUTE_ERROR:
      case RDMA_CM_EVENT_MULTICAST_ERROR:
        say(fmt::format("mckey: event: {}, error: {}", ev.name(), ev.status()));
        run_.fail(m, event_error(ev, fmt::format("qp {} joining {}", m.index, group_)));
        return true;
      default:
        return false;
    }
  }

  void send_all() {
    // As the original: give the fabric time to set up the group's routes.
    if (opt_.delay_ms > 0) wait_readable(-1, deadline::after(milliseconds(opt_.delay_ms)));
    say("initiating data transfers");
    auto t0 = clock::now();
    auto until = opt_.timeout.idle();
    for (const auto& m : run_.members()) run_.send(*m, m->group, count(), until);
    run_.finish_sends(until);
    rep_.elapsed_us = us_since(t0);
    say("data transfers complete");
  }

  // The datagrams of every QP, then what came larger than agreed.
  void receive_all() {
    say("receiving data transfers");
    auto t0 = clock::now();
    auto until = opt_.timeout.idle();
    run_.receive(until);
    for (const auto& m : run_.members())
      if (auto w = oversize_warning(fmt::format("qp {}", m->index), m->result(), rep_.size); !w.empty()) con_.warning(w);
    rep_.elapsed_us = us_since(t0);
    if (judge(rep_).ok()) say("data transfers complete");
  }

  const options& opt_;
  report& rep_;
  console& con_;
  bool unmapped_ = false;
  std::string group_;  // -m or -M, escaped for messages
  bool loopback_warned_ = false;
  rdma_port_space ps_ = RDMA_PS_UDP;
  sockaddr_storage src_{};
  sockaddr_storage dst_{};
  // Teardown bottom-up: the members (leave, AH, QP, ...), their ids, then
  // the event channel.
  std::optional<cm_channel> channel_;
  ud_run<member> run_;
};

}  // namespace

verdict run(const options& opt, report& rep, console& con) {
  test_run t(opt, rep, con);
  return run_ud_test(con, [&] { t.execute(); },
                     {.loss_lines = [&] { return loss_lines(rep); },
                      .stats_lines = [&] { return opt.stats ? stats_lines(rep) : std::vector<std::string>{}; },
                      .judge = [&] { return judge(rep); },
                      .emit_results = [&] {
                        for (const auto& q : rep.results) con.event("result", [&] { return result_json(q); });
                      }});
}

}  // namespace mckey
