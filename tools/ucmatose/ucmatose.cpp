#include "ucmatose.hpp"

#include "payload.hpp"
#include "made_ahead.hpp"

#include "fabric/addr.hpp"
#include "fabric/cm.hpp"
#include "fabric/rc.hpp"
#include "fabric/verbs.hpp"
#include "fabric/wait.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <cstdio>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace ucmatose {

using fabric::deadline;
using fabric::error;
using fabric::exit_code;
using std::chrono::milliseconds;

namespace {

using time_point = fabric::clock::time_point;

/// The original's progress lines on stdout; nothing with --json.
class printer {
public:
  explicit printer(bool quiet) : quiet_(quiet) {}
  void line(std::string_view text) const {
    if (quiet_) return;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }

private:
  bool quiet_;
};

/// The verbs resources of one device, shared by every connection on it:
/// one PD, one MR per direction, and CQs handed out in slices, so that
/// setting up a connection costs a QP and nothing else.
struct device_resources {
  ibv_context* verbs = nullptr;
  fabric::protection_domain pd;            // destroyed last
  fabric::registered_buffer send_buf;      // message seq's payload at seq x size
  fabric::registered_buffer recv_buf;      // (connection x count + seq) x size with --verify, else one slot
  std::unique_ptr<fabric::cq_group> cqs;
  std::vector<ibv_cq*> all_cqs;
  ibv_cq* current = nullptr;
  int left_in_current = 0;                 // entries of `current` not yet handed out
  int cq_depth = 0;
};

/// A QP made for a connection before the connection needed it (in INIT,
/// its receives posted), with the CQs it was made on.
struct prepared_qp {
  fabric::verbs_qp qp;
  ibv_cq* send_cq = nullptr;
  ibv_cq* recv_cq = nullptr;
  double create_us = 0;                    // what making it took: the connection's create_qp step
};

enum class state { resolving_addr, resolving_route, connecting, established, failed };

/// Bookkeeping of one connection beside its report entry.
struct connection {
  rdma_cm_id* id = nullptr;                // owned by session::ids_
  device_resources* dev = nullptr;
  ibv_cq* send_cq = nullptr;
  ibv_cq* recv_cq = nullptr;
  state st = state::resolving_addr;
  std::array<time_point, step_count> started{};
  std::uint64_t send_done = 0, recv_done = 0;  // completions of any status
  bool disconnect_started = false;          // we called rdma_disconnect
  bool disconnected = false;                // DISCONNECTED arrived
};

constexpr std::uint64_t send_bit = 1ULL << 32;

std::uint64_t make_wr_id(std::size_t index, std::uint32_t seq, bool send) {
  return (static_cast<std::uint64_t>(index) << 33) | (send ? send_bit : 0) | seq;
}

class session {
public:
  session(const options& o, report& r)
      : o_(o), r_(r), out_(o.out.json), timed_(o.stats || o.out.json), count_(static_cast<std::uint32_t>(o.messages())) {}

  exit_code run_client();
  exit_code run_server();

  /// The first failure of any connection, for a run where none was established.
  [[nodiscard]] std::optional<error> first_failure() const {
    if (!first_failure_) return std::nullopt;
    return error(*first_failure_, first_failure_what_);
  }

  /// A server that saw fewer clients than -c within --timeout says so here.
  [[nodiscard]] const std::string& shortage() const noexcept { return shortage_; }

private:
  /// Whether a connection failed to set up.
  [[nodiscard]] bool setup_failed() const {
    return std::any_of(conns_.begin(), conns_.end(), [](const connection& c) { return c.st == state::failed; });
  }

  fabric::addr_query query(const std::string& node, int extra_flags) const;
  fabric::cm_channel& events() { return migrated_ ? *migrated_ : channel_; }
  connection_result& result(std::size_t i) { return r_.connections[i]; }
  std::size_t index_of(const rdma_cm_id* id) const { return reinterpret_cast<std::uintptr_t>(id->context) - 1; }

  // Step times are taken only when they are reported (--stats, --json):
  // a clock read can be a system call (with the HPET clock source, as
  // under emulation), and a run takes some fifteen per connection. Steps
  // that meet share a time stamp.
  [[nodiscard]] time_point stamp() const { return timed_ ? fabric::clock::now() : time_point{}; }
  void start(std::size_t i, step s) { start(i, s, stamp()); }
  void start(std::size_t i, step s, time_point at) { conns_[i].started[static_cast<std::size_t>(s)] = at; }
  void finish(std::size_t i, step s) { finish(i, s, stamp()); }
  void finish(std::size_t i, step s, time_point at);
  void fail(std::size_t i, const std::string& why, exit_code code);

  device_resources& device_for(ibv_context* verbs);
  ibv_cq* slice_cq(device_resources& dev, int entries);
  fabric::rc_config qp_config() const;
  /// Starts making QPs ahead on `verbs`, once. If that fails, each
  /// connection makes its own QP and meets the error there, at its step.
  void start_factory(ibv_context* verbs, std::uint8_t port);
  void make_factory(ibv_context* verbs, std::uint8_t port);
  /// Makes connection i's QP on `dev` and posts its receives; safe on the
  /// factory's thread (nothing shared is written).
  prepared_qp make_qp(const device_resources& dev, ibv_cq* send_cq, ibv_cq* recv_cq, std::uint8_t port,
                      std::size_t i) const;
  void setup_qp(std::size_t i);
  void post_recvs(ibv_qp* qp, std::size_t i, const device_resources& dev) const;
  void post_sends(std::size_t i);
  void set_id_options(rdma_cm_id* id, bool client);

  void handle(fabric::cm_event& ev);
  void on_connect_request(fabric::cm_event& ev);
  void on_disconnected(std::size_t i);
  void on_completion(const ibv_wc& wc);

  /// Handles CM events and completions until `done` holds; false when
  /// nothing happened for --timeout ms first.
  bool drive(const std::function<bool()>& done);
  /// Waits for every established connection to finish `what` (counted by
  /// `done_count`); marks the stragglers with an error on timeout.
  void complete_phase(std::uint64_t connection::*done_count, std::string_view what);
  void connect_phase(bool server);
  /// Sets every connection up; false when one failed, and then, as in the
  /// original, the test ends there: the established connections are only
  /// disconnected, and everything is destroyed.
  bool set_up(bool server);
  void migrate();
  void disconnect_phase(bool initiate);
  void destroy();

  const options& o_;
  report& r_;
  printer out_;
  bool timed_;                             // the step times are reported
  std::uint32_t count_;
  std::optional<exit_code> first_failure_;
  std::string first_failure_what_;
  std::string shortage_;
  std::size_t pending_ = 0;                // connections still being set up
  time_point setup_start_{}, last_established_{};
  int max_cqe_ = 0;

  fabric::resolved_pair addrs_;
  fabric::cm_channel channel_;                         // destroyed after every id
  std::unique_ptr<fabric::cm_channel> migrated_;       // -m: where the ids go before disconnecting
  fabric::cm_id listener_;
  std::vector<fabric::cm_id> ids_;                     // destroyed after the device resources
  std::vector<fabric::cm_id> refused_;                 // requests beyond -c, rejected
  std::vector<std::unique_ptr<device_resources>> devices_;
  std::unique_ptr<made_ahead<prepared_qp>> factory_;   // destroyed before the devices
  ibv_context* factory_device_ = nullptr;
  bool factory_tried_ = false;
  std::vector<fabric::cm_qp> qps_;                     // destroyed first
  std::vector<connection> conns_;
  std::vector<ibv_send_wr> send_wrs_;
  std::vector<ibv_sge> sges_;
};

fabric::addr_query session::query(const std::string& node, int extra_flags) const {
  fabric::addr_query q;
  q.node = node;
  q.service = std::to_string(o_.port);
  q.flags = extra_flags;
  q.port_space = o_.port_space == "ib" || o_.port_space == "IB" ? RDMA_PS_IB : RDMA_PS_TCP;
  q.qp_type = 0;
  std::string f = o_.format;
  std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (f == "ip" || f == "ipv6") q.flags |= RAI_NUMERICHOST;
  if (f == "gid") {
    q.flags |= RAI_NUMERICHOST | RAI_FAMILY;
    q.family = AF_IB;
  }
  return q;
}

void session::finish(std::size_t i, step s, time_point at) {
  auto k = static_cast<std::size_t>(s);
  if (!timed_ || conns_[i].started[k] == time_point{}) return;
  result(i).step_us[k] = fabric::us_between(conns_[i].started[k], at);
}

void session::fail(std::size_t i, const std::string& why, exit_code code) {
  auto& c = conns_[i];
  if (c.st != state::established && c.st != state::failed && pending_ > 0) --pending_;
  if (c.st != state::established) c.st = state::failed;
  if (result(i).error.empty()) result(i).error = why;
  if (!first_failure_) {
    first_failure_ = code;
    first_failure_what_ = why;
  }
}

device_resources& session::device_for(ibv_context* verbs) {
  for (auto& d : devices_)
    if (d->verbs == verbs) return *d;
  if (!verbs) throw error(exit_code::no_device, "rdma_cm id is not bound to an RDMA device");
  if (max_cqe_ == 0) {
    ibv_device_attr attr{};
    fabric::check_ret(ibv_query_device(verbs, &attr), "ibv_query_device");
    max_cqe_ = attr.max_cqe;
  }
  auto d = std::make_unique<device_resources>();
  d->verbs = verbs;
  d->pd = fabric::alloc_pd(verbs);
  auto size = static_cast<std::size_t>(o_.size);
  // Every side sends the pattern, so that a --verify peer can check it.
  std::size_t send_slots = std::max<std::size_t>(count_, 1);
  std::size_t recv_slots = o_.verify ? static_cast<std::size_t>(o_.connections) * std::max<std::size_t>(count_, 1) : 1;
  d->send_buf = fabric::registered_buffer(d->pd.get(), send_slots * size, IBV_ACCESS_LOCAL_WRITE);
  d->recv_buf = fabric::registered_buffer(d->pd.get(), recv_slots * size, IBV_ACCESS_LOCAL_WRITE);
  for (std::size_t s = 0; s < send_slots && size > 0; ++s)
    fill_payload(d->send_buf.bytes().subspan(s * size, size), static_cast<std::uint32_t>(s));
  d->cqs = std::make_unique<fabric::cq_group>(verbs);
  // Enough for every connection's sends and receives, in as few CQs as the device allows.
  auto per_conn = 2LL * std::max<std::uint32_t>(count_, 1);
  d->cq_depth = static_cast<int>(std::min<long long>(max_cqe_, per_conn * o_.connections));
  devices_.push_back(std::move(d));
  return *devices_.back();
}

ibv_cq* session::slice_cq(device_resources& dev, int entries) {
  if (entries > max_cqe_)
    throw error(exit_code::no_device, fmt::format("-C {} needs {} CQ entries; the device allows {}", o_.count, entries, max_cqe_));
  if (!dev.current || dev.left_in_current < entries) {
    dev.current = dev.cqs->add(std::max(dev.cq_depth, entries));
    dev.all_cqs.push_back(dev.current);
    dev.left_in_current = std::max(dev.cq_depth, entries);
  }
  dev.left_in_current -= entries;
  return dev.current;
}

fabric::rc_config session::qp_config() const {
  fabric::rc_config cfg;
  cfg.send_depth = std::max<std::uint32_t>(count_, 1);
  cfg.recv_depth = cfg.send_depth;
  cfg.signal_all = true;
  return cfg;
}

void session::start_factory(ibv_context* verbs, std::uint8_t port) {
  if (std::exchange(factory_tried_, true)) return;
  try {
    make_factory(verbs, port);
  } catch (const error& e) {
    if (e.code() == exit_code::interrupted) throw;
  }
}

void session::make_factory(ibv_context* verbs, std::uint8_t port) {
  auto& dev = device_for(verbs);
  auto depth = static_cast<int>(qp_config().send_depth);
  // The helper thread only makes QPs and posts receives; the CQ slices are
  // handed out here.
  auto n = static_cast<std::size_t>(o_.connections);
  std::vector<std::pair<ibv_cq*, ibv_cq*>> cqs(n);
  for (auto& [send, recv] : cqs) {
    send = slice_cq(dev, depth);
    recv = slice_cq(dev, depth);
  }
  factory_device_ = verbs;
  factory_ = std::make_unique<made_ahead<prepared_qp>>(n, [this, &dev, port, cqs = std::move(cqs)](std::size_t k) {
    return make_qp(dev, cqs[k].first, cqs[k].second, port, k);
  });
}

prepared_qp session::make_qp(const device_resources& dev, ibv_cq* send_cq, ibv_cq* recv_cq, std::uint8_t port,
                             std::size_t i) const {
  auto t = stamp();
  prepared_qp p;
  p.send_cq = send_cq;
  p.recv_cq = recv_cq;
  p.qp = fabric::create_unattached_rc_qp(dev.pd.get(), send_cq, recv_cq, qp_config(), port);
  post_recvs(p.qp.get(), i, dev);
  if (timed_) p.create_us = fabric::us_since(t);
  return p;
}

void session::setup_qp(std::size_t i) {
  auto& c = conns_[i];
  c.dev = &device_for(c.id->verbs);
  prepared_qp p;
  if (factory_ && factory_device_ == c.id->verbs) {
    p = factory_->take(i);
  } else {
    // Made here and now: no factory, or the connection came in on another device.
    auto depth = static_cast<int>(qp_config().send_depth);
    ibv_cq* send_cq = slice_cq(*c.dev, depth);
    ibv_cq* recv_cq = slice_cq(*c.dev, depth);
    p = make_qp(*c.dev, send_cq, recv_cq, c.id->port_num, i);
  }
  c.send_cq = p.send_cq;
  c.recv_cq = p.recv_cq;
  if (timed_) result(i).step_us[static_cast<std::size_t>(step::create_qp)] = p.create_us;
  qps_[i] = fabric::attach_rc_qp(c.id, std::move(p.qp));
}

void session::post_recvs(ibv_qp* qp, std::size_t i, const device_resources& dev) const {
  if (count_ == 0) return;
  auto size = static_cast<std::uint32_t>(o_.size);
  // Called from the QP factory's thread too: nothing shared is written.
  std::vector<ibv_sge> sges(count_);
  std::vector<ibv_recv_wr> wrs(count_);
  for (std::uint32_t s = 0; s < count_; ++s) {
    std::size_t slot = o_.verify ? i * count_ + s : 0;
    sges[s] = {dev.recv_buf.addr() + slot * size, size, dev.recv_buf.lkey()};
    wrs[s].wr_id = make_wr_id(i, s, false);
    wrs[s].sg_list = &sges[s];
    wrs[s].num_sge = 1;
    wrs[s].next = s + 1 < count_ ? &wrs[s + 1] : nullptr;
  }
  fabric::post_recv(qp, wrs[0]);
}

void session::post_sends(std::size_t i) {
  if (count_ == 0) return;
  auto& c = conns_[i];
  auto size = static_cast<std::uint32_t>(o_.size);
  sges_.resize(count_);
  send_wrs_.resize(count_);
  for (std::uint32_t s = 0; s < count_; ++s) {
    std::size_t slot = s;
    sges_[s] = {c.dev->send_buf.addr() + slot * size, size, c.dev->send_buf.lkey()};
    send_wrs_[s] = {};
    send_wrs_[s].wr_id = make_wr_id(i, s, true);
    send_wrs_[s].opcode = IBV_WR_SEND;
    send_wrs_[s].send_flags = IBV_SEND_SIGNALED;
    send_wrs_[s].sg_list = &sges_[s];
    send_wrs_[s].num_sge = 1;
    send_wrs_[s].next = s + 1 < count_ ? &send_wrs_[s + 1] : nullptr;
  }
  try {
    fabric::post_send(qps_[i].get(), send_wrs_[0]);
  } catch (const error& e) {
    // The sends before the failed one went out and will complete.
    fail(i, e.what(), e.code());
    c.send_done = count_;
  }
}

void session::set_id_options(rdma_cm_id* id, bool client) {
  // Like the original, a refused option is reported and the test goes on.
  if (client && o_.tos) {
    auto tos = static_cast<std::uint8_t>(*o_.tos);
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos) != 0)
      fmt::print(stderr, "ucmatose: set TOS option failed: {}\n", std::strerror(errno));
  }
  if (o_.ack_timeout) {
    auto t = static_cast<std::uint8_t>(*o_.ack_timeout);
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof t) != 0)
      fmt::print(stderr, "ucmatose: set ack timeout option failed: {}\n", std::strerror(errno));
  }
}

void session::on_connect_request(fabric::cm_event& ev) {
  fabric::cm_id id(ev.id());
  if (conns_.size() >= static_cast<std::size_t>(o_.connections)) {
    out_.line("cmatose: failing connection request");
    rdma_reject(id.get(), nullptr, 0);
    // The id goes once its event is acknowledged, with the others.
    refused_.push_back(std::move(id));
    return;
  }
  if (conns_.empty()) setup_start_ = stamp();
  std::size_t i = conns_.size();
  id->context = reinterpret_cast<void*>(static_cast<std::uintptr_t>(i + 1));
  conns_.emplace_back().id = id.get();
  conns_[i].st = state::connecting;
  ids_.push_back(std::move(id));
  qps_.emplace_back();
  r_.connections.emplace_back().peer = fabric::peer_name(conns_[i].id);
  ++pending_;
  try {
    setup_qp(i);
    set_id_options(conns_[i].id, false);
    start(i, step::connect);
    fabric::check_rc(rdma_accept(conns_[i].id, nullptr), "rdma_accept");
  } catch (const error& e) {
    out_.line("cmatose: failing connection request");
    rdma_reject(conns_[i].id, nullptr, 0);
    fail(i, e.what(), e.code());
  }
}

void session::on_disconnected(std::size_t i) {
  auto& c = conns_[i];
  c.disconnected = true;
  if (!c.disconnect_started) {
    // The peer started it: our part is to answer.
    start(i, step::disconnect);
    c.disconnect_started = true;
    rdma_disconnect(c.id);
  }
  finish(i, step::disconnect);
  if (c.st != state::established) fail(i, "peer disconnected before the connection was established", exit_code::connect_failed);
}

void session::handle(fabric::cm_event& ev) {
  if (ev.type() == RDMA_CM_EVENT_CONNECT_REQUEST) return on_connect_request(ev);
  if (ev.id() == listener_.get() || !ev.id()->context) {
    if (ev.type() == RDMA_CM_EVENT_DEVICE_REMOVAL) throw fabric::event_error(ev, "listening");
    return;  // events of refused requests
  }
  std::size_t i = index_of(ev.id());
  auto& c = conns_[i];
  try {
    switch (ev.type()) {
      case RDMA_CM_EVENT_ADDR_RESOLVED: {
        auto now = stamp();
        finish(i, step::resolve_addr, now);
        set_id_options(c.id, true);
        c.st = state::resolving_route;
        start(i, step::resolve_route, now);
        fabric::check_rc(rdma_resolve_route(c.id, 2000), "rdma_resolve_route");
        // The device is known now (if it was not from the start): the QPs
        // are made ahead while routes resolve.
        start_factory(c.id->verbs, c.id->port_num);
        break;
      }
      case RDMA_CM_EVENT_ROUTE_RESOLVED: {
        finish(i, step::resolve_route);
        setup_qp(i);
        rdma_conn_param param{};
        param.responder_resources = 1;
        param.initiator_depth = 1;
        param.retry_count = 5;
        if (addrs_.dst) {
          param.private_data = addrs_.dst->ai_connect;
          param.private_data_len = static_cast<std::uint8_t>(addrs_.dst->ai_connect_len);
        }
        c.st = state::connecting;
        start(i, step::connect);
        fabric::check_rc(rdma_connect(c.id, &param), "rdma_connect");
        break;
      }
      case RDMA_CM_EVENT_ESTABLISHED: {
        auto now = stamp();
        finish(i, step::connect, now);
        if (c.st != state::failed) {
          c.st = state::established;
          result(i).established = true;
          last_established_ = now;
          if (pending_ > 0) --pending_;
        }
        break;
      }
      case RDMA_CM_EVENT_ADDR_ERROR:
      case RDMA_CM_EVENT_ROUTE_ERROR:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_REJECTED: {
        out_.line(fmt::format("cmatose: event: {}, error: {}", ev.name(), ev.status()));
        auto e = fabric::event_error(ev, c.st == state::resolving_addr    ? "rdma_resolve_addr"
                                         : c.st == state::resolving_route ? "rdma_resolve_route"
                                                                          : "connection");
        fail(i, e.what(), e.code());
        break;
      }
      case RDMA_CM_EVENT_DISCONNECTED:
        on_disconnected(i);
        break;
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
        throw fabric::event_error(ev, "connection");
      default:
        break;
    }
  } catch (const error& e) {
    if (e.code() == exit_code::interrupted || ev.type() == RDMA_CM_EVENT_DEVICE_REMOVAL) throw;
    fail(i, e.what(), e.code());
  }
}

void session::on_completion(const ibv_wc& wc) {
  std::size_t i = wc.wr_id >> 33;
  auto seq = static_cast<std::uint32_t>(wc.wr_id & 0xffffffffu);
  bool send = (wc.wr_id & send_bit) != 0;
  if (i >= conns_.size()) return;
  auto& c = conns_[i];
  auto& res = result(i);
  ++(send ? c.send_done : c.recv_done);
  if (wc.status != IBV_WC_SUCCESS) {
    // Flushes follow a disconnect or an earlier error, which said why.
    if (wc.status != IBV_WC_WR_FLUSH_ERR) {
      std::string why = fabric::wc_error(wc, send ? "send" : "receive").what();
      if (wc.status == IBV_WC_RNR_RETRY_EXC_ERR) why += "; the peer had no receive posted (different -C?)";
      fail(i, why, exit_code::test_failed);
    }
    return;
  }
  if (send) {
    ++res.sent;
    return;
  }
  ++res.received;
  if (!o_.verify) return;
  auto size = static_cast<std::size_t>(o_.size);
  auto slot = c.dev->recv_buf.bytes().subspan((i * count_ + seq) * size, size);
  switch (wc.byte_len != size ? payload_check::mismatch : check_payload(slot, seq)) {
    case payload_check::match: break;
    case payload_check::unfilled:
    case payload_check::foreign: ++res.unverified; break;
    case payload_check::mismatch: ++res.verify_failures; break;
  }
}

bool session::drive(const std::function<bool()>& done) {
  std::array<ibv_wc, 32> wcs{};
  std::vector<int> fds;
  for (;;) {
    for (auto& d : devices_)
      for (ibv_cq* cq : d->all_cqs)
        for (int n; (n = ibv_poll_cq(cq, static_cast<int>(wcs.size()), wcs.data())) != 0;) {
          if (n < 0) fabric::throw_errno(-n, "ibv_poll_cq");
          for (int k = 0; k < n; ++k) on_completion(wcs[static_cast<std::size_t>(k)]);
        }
    while (auto ev = events().try_next()) handle(*ev);
    if (done()) return true;
    fds.clear();
    fds.push_back(events().fd());
    for (auto& d : devices_) fds.push_back(d->cqs->fd());
    int ready = fabric::wait_any(fds, milliseconds(o_.timeout_ms));
    if (ready < 0) return false;
    if (ready > 0) devices_[static_cast<std::size_t>(ready - 1)]->cqs->consume_events();
  }
}

void session::complete_phase(std::uint64_t connection::*done_count, std::string_view what) {
  auto finished = [&](const connection& c) { return c.st != state::established || c.*done_count >= count_; };
  if (drive([&] { return std::all_of(conns_.begin(), conns_.end(), finished); })) return;
  for (std::size_t i = 0; i < conns_.size(); ++i)
    if (!finished(conns_[i]))
      fail(i, fmt::format("timed out after {} ms with {} of {} messages {}", o_.timeout_ms, conns_[i].*done_count,
                          count_, what),
           exit_code::timeout);
}

void session::connect_phase(bool server) {
  auto all_set_up = [&] {
    return server ? conns_.size() == static_cast<std::size_t>(o_.connections) && pending_ == 0 : pending_ == 0;
  };
  if (server) {
    // A server waits for its first client as long as it takes.
    while (conns_.empty()) {
      auto ev = events().next(deadline::never());
      if (ev) handle(*ev);
    }
  }
  if (drive(all_set_up)) return;
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    std::string_view waiting = conns_[i].st == state::resolving_addr    ? "ADDR_RESOLVED"
                               : conns_[i].st == state::resolving_route ? "ROUTE_RESOLVED"
                                                                         : "ESTABLISHED";
    if (conns_[i].st != state::established && conns_[i].st != state::failed)
      fail(i, fmt::format("timed out after {} ms waiting for {}", o_.timeout_ms, waiting), exit_code::timeout);
  }
  if (server && conns_.size() < static_cast<std::size_t>(o_.connections)) {
    // The clients that came are still served; the run then ends with timeout.
    shortage_ = fmt::format("timed out after {} ms with {} of {} clients connected", o_.timeout_ms, conns_.size(),
                            o_.connections);
    if (!first_failure_) {
      first_failure_ = exit_code::timeout;
      first_failure_what_ = shortage_;
    }
  }
}

bool session::set_up(bool server) {
  connect_phase(server);
  if (timed_ && r_.established() > 0) r_.setup_ms = fabric::ms_between(setup_start_, last_established_);
  if (!setup_failed()) return true;
  disconnect_phase(true);
  destroy();
  return false;
}

void session::migrate() {
  out_.line("migrating to new event channel");
  auto ch = std::make_unique<fabric::cm_channel>();
  if (listener_) ch->adopt(listener_.get());
  for (auto& id : ids_) ch->adopt(id.get());
  for (auto& id : refused_) ch->adopt(id.get());
  migrated_ = std::move(ch);
}

void session::disconnect_phase(bool initiate) {
  auto start_disconnects = [&] {
    for (std::size_t i = 0; i < conns_.size(); ++i) {
      auto& c = conns_[i];
      if (c.st != state::established || c.disconnect_started) continue;
      start(i, step::disconnect);
      c.disconnect_started = true;
      rdma_disconnect(c.id);
    }
  };
  auto all_done = [&] {
    return std::all_of(conns_.begin(), conns_.end(),
                       [](const connection& c) { return c.st != state::established || c.disconnected; });
  };
  if (initiate) start_disconnects();
  if (drive(all_done)) return;
  if (!initiate) {
    // The server never disconnected: do it ourselves, and say so.
    for (std::size_t i = 0; i < conns_.size(); ++i)
      if (conns_[i].st == state::established && !conns_[i].disconnected)
        fail(i, fmt::format("timed out after {} ms waiting for the server to disconnect", o_.timeout_ms),
             exit_code::timeout);
    start_disconnects();
    if (drive(all_done)) return;
  }
  for (std::size_t i = 0; i < conns_.size(); ++i)
    if (conns_[i].st == state::established && !conns_[i].disconnected)
      fail(i, fmt::format("timed out after {} ms waiting for DISCONNECTED", o_.timeout_ms), exit_code::timeout);
}

void session::destroy() {
  // QPs first, then the shared resources, then the ids (the man pages' order).
  std::vector<double> spent(conns_.size());
  auto timed_reset = [&](std::size_t i, auto& handle) {
    auto t = stamp();
    handle.reset();
    if (timed_) spent[i] += fabric::us_since(t);
  };
  for (std::size_t i = 0; i < conns_.size(); ++i) timed_reset(i, qps_[i]);
  qps_.clear();
  factory_.reset();
  devices_.clear();
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    timed_reset(i, ids_[i]);
    if (timed_) result(i).step_us[static_cast<std::size_t>(step::destroy)] = spent[i];
  }
  ids_.clear();
}

exit_code session::run_client() {
  out_.line("cmatose: starting client");
  addrs_ = fabric::resolve_pair(query(o_.server, 0), o_.bind);
  auto n = static_cast<std::size_t>(o_.connections);
  auto ps = static_cast<rdma_port_space>(query(o_.server, 0).port_space);
  conns_.resize(n);
  qps_.resize(n);
  r_.connections.resize(n);
  ids_.reserve(n);
  // With one RDMA device on the host, every connection will be on it: its
  // shared resources are made and the QPs made ahead from now, as the
  // server does. Otherwise that waits for the first address to resolve.
  if (ibv_context* verbs = fabric::sole_device()) start_factory(verbs, 1);
  std::string peer = fmt::format("{}:{}", fabric::format_addr(addrs_.dst_addr()), o_.port);
  for (std::size_t i = 0; i < n; ++i) {
    start(i, step::create_id);
    ids_.push_back(channel_.create_id(ps, reinterpret_cast<void*>(static_cast<std::uintptr_t>(i + 1))));
    conns_[i].id = ids_.back().get();
    finish(i, step::create_id);
    result(i).peer = peer;
  }
  // As in the original, the ids exist before connecting starts: setup is
  // timed from the first address resolution.
  out_.line("cmatose: connecting");
  setup_start_ = stamp();
  pending_ = n;
  for (std::size_t i = 0; i < n; ++i) {
    start(i, step::resolve_addr);
    int rc = rdma_resolve_addr(conns_[i].id, addrs_.src_addr(), addrs_.dst_addr(), 2000);
    if (rc != 0) {
      int err = errno;
      fail(i, fmt::format("rdma_resolve_addr {}: {}", fabric::format_addr(addrs_.dst_addr()), std::strerror(err)),
           fabric::classify_errno(err));
    }
  }
  if (!set_up(false)) return exit_code::ok;
  if (count_ > 0) {
    out_.line("receiving data transfers");
    complete_phase(&connection::recv_done, "received");
    out_.line("sending replies");
    for (std::size_t i = 0; i < n; ++i)
      if (conns_[i].st == state::established) post_sends(i);
    complete_phase(&connection::send_done, "sent");
    out_.line("data transfers complete");
  }
  if (o_.migrate) migrate();
  disconnect_phase(false);
  destroy();
  return exit_code::ok;
}

exit_code session::run_server() {
  out_.line("cmatose: starting server");
  auto local = fabric::resolve(query(o_.bind, RAI_PASSIVE));
  listener_ = fabric::listen_at(channel_, local->ai_src_addr, static_cast<rdma_port_space>(local->ai_port_space), 0);
  conns_.reserve(static_cast<std::size_t>(o_.connections));
  // The expected clients' QPs are made ahead, while nobody waits, so that
  // accepting costs only the CM exchange. Which device a client comes in
  // on is known ahead only for a bound listener or a host with one device;
  // otherwise a QP is made when its client comes.
  if (ibv_context* verbs = listener_->verbs ? listener_->verbs : fabric::sole_device())
    start_factory(verbs, listener_->verbs ? listener_->port_num : 1);
  if (!set_up(true)) return exit_code::ok;
  if (count_ > 0) {
    out_.line("initiating data transfers");
    for (std::size_t i = 0; i < conns_.size(); ++i)
      if (conns_[i].st == state::established) post_sends(i);
    out_.line("completing sends");
    complete_phase(&connection::send_done, "sent");
    out_.line("receiving data transfers");
    complete_phase(&connection::recv_done, "received");
    out_.line("data transfers complete");
  }
  if (o_.migrate) migrate();
  out_.line("cmatose: disconnecting");
  disconnect_phase(true);
  out_.line("disconnected");
  destroy();
  return exit_code::ok;
}

}  // namespace

exit_code run(const options& o, report& r) {
  r.opt = o;
  r.role = o.client() ? "client" : "server";
  validate(o);
  printer out(o.out.json);
  exit_code code = exit_code::ok;
  std::string why;
  try {
    session s(o, r);
    o.client() ? s.run_client() : s.run_server();
    auto failure = s.first_failure();
    if (r.established() == 0 && failure) throw *failure;
    if (!s.shortage().empty())
      throw error(exit_code::timeout, s.shortage());
    code = verdict(r, why);
  } catch (const error& e) {
    code = e.code();
    why = e.what();
  }
  if (o.stats && !o.out.json)
    for (const auto& line : format_stats(r)) out.line(line);
  fabric::cli::print_test_end(o.out, code);
  if (code != exit_code::ok) throw error(code, why);
  return code;
}

}  // namespace ucmatose
