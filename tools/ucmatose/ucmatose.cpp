#include "ucmatose.hpp"

#include "fabric/addr.hpp"
#include "fabric/cm.hpp"
#include "fabric/completion.hpp"
#include "fabric/payload.hpp"
#include "fabric/rc.hpp"
#include "fabric/verbs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace ucmatose {

using fabric::deadline;
using fabric::error;
using fabric::exit_code;
using std::chrono::milliseconds;

void add_options(CLI::App& app, options& opt) {
  app.add_option("-s,--server", opt.server, "Server address: run as the client and connect to it")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_option("-b,--bind", opt.bind, "Local address to bind to")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-f,--format", opt.format, "Address format")
      ->check(CLI::IsMember({"name", "ip", "ipv6", "gid"}))
      ->capture_default_str();
  app.add_option("-P,--port-space", opt.port_space, "rdma_cm port space")
      ->check(CLI::IsMember({"tcp", "ib"}))
      ->capture_default_str();
  app.add_option("-c,--connections", opt.connections, "Connections")->check(CLI::Range(1, 100000))->capture_default_str();
  app.add_option("-C,--count", opt.count, "Messages per connection each way")->check(CLI::Range(0, 1000000))->capture_default_str();
  app.add_option("-S,--size", opt.size, "Message size in bytes")->check(CLI::Range(0, 1 << 30))->capture_default_str();
  app.add_option("-t,--tos", opt.tos, "Type of service")->check(CLI::Range(0, 255));
  app.add_option("-p,--port", opt.port, "Port")->capture_default_str();
  app.add_option("-a,--ack-timeout", opt.ack_timeout, "Ack timeout (exponent, 4.096 us << N)")->check(CLI::Range(0, 31));
  app.add_flag("-m,--migrate", opt.migrate, "Move the ids to a new event channel before disconnecting");
  app.add_flag("--verify", opt.verify, "Send a checkable payload and verify what arrives (both sides ours)");
  app.add_flag("--stats", opt.stats, "Print per-step timings and the connection rate");
  fabric::cli::add_timeout_option(app, opt.timeout_ms, "Milliseconds without progress after which a phase gives up");
}

step_summary summarize_step(const report& r, step s) {
  step_summary out;
  double sum = 0;
  for (const auto& c : r.connections) {
    double v = c.step_us[static_cast<std::size_t>(s)];
    if (v < 0) continue;
    out.min = out.samples == 0 ? v : std::min(out.min, v);
    out.max = out.samples == 0 ? v : std::max(out.max, v);
    sum += v;
    ++out.samples;
  }
  if (out.samples) out.mean = sum / out.samples;
  return out;
}

double connections_per_second(const report& r) {
  auto n = std::count_if(r.connections.begin(), r.connections.end(), [](const auto& c) { return c.connected; });
  return r.connect_seconds > 0 ? static_cast<double>(n) / r.connect_seconds : 0;
}

void to_json(nlohmann::json& j, const report& r) {
  const auto& o = r.opt;
  j["role"] = r.role;
  nlohmann::json opts{{"format", o.format}, {"port_space", o.port_space}, {"connections", o.connections},
                      {"count", o.count}, {"size", o.size}, {"port", o.port}, {"migrate", o.migrate},
                      {"verify", o.verify}, {"timeout", o.timeout_ms}};
  if (!o.server.empty()) opts["server"] = o.server;
  if (!o.bind.empty()) opts["bind"] = o.bind;
  if (o.tos >= 0) opts["tos"] = o.tos;
  if (o.ack_timeout >= 0) opts["ack_timeout"] = o.ack_timeout;
  j["options"] = opts;
  int sent = 0, received = 0, expected = 0, connected = 0, verify_failures = 0;
  nlohmann::json conns = nlohmann::json::array();
  for (const auto& c : r.connections) {
    sent += c.sent;
    received += c.received;
    verify_failures += c.verify_failures;
    if (c.connected) {
      ++connected;
      expected += o.count;
    }
    nlohmann::json steps;
    for (std::size_t s = 0; s < step_names.size(); ++s)
      if (c.step_us[s] >= 0) steps[step_names[s]] = c.step_us[s];
    conns.push_back({{"index", c.index}, {"connected", c.connected}, {"sent", c.sent}, {"received", c.received},
                     {"verify_failures", c.verify_failures}, {"steps_us", steps},
                     {"error", c.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.error)}});
  }
  j["connections"] = conns;
  j["counts"] = {{"connections", r.connections.size()}, {"connected", connected}, {"sent", sent},
                 {"received", received}, {"expected", expected}, {"lost", std::max(0, expected - received)},
                 {"verify_failures", verify_failures}};
  nlohmann::json steps;
  for (std::size_t s = 0; s < step_names.size(); ++s) {
    auto sum = summarize_step(r, static_cast<step>(s));
    if (sum.samples) steps[step_names[s]] = {{"min", sum.min}, {"mean", sum.mean}, {"max", sum.max}, {"samples", sum.samples}};
  }
  j["steps_us"] = steps;
  j["connections_per_second"] = connections_per_second(r);
}

std::vector<std::string> format_stats(const report& r) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format("{:<14} {:>10} {:>10} {:>10}  (us)", "step", "min", "mean", "max"));
  for (std::size_t s = 0; s < step_names.size(); ++s) {
    auto sum = summarize_step(r, static_cast<step>(s));
    if (sum.samples) lines.push_back(fmt::format("{:<14} {:>10.1f} {:>10.1f} {:>10.1f}", step_names[s], sum.min, sum.mean, sum.max));
  }
  lines.push_back(fmt::format("connections/s  {:.1f}", connections_per_second(r)));
  return lines;
}

namespace {

double micros(fabric::clock::time_point a, fabric::clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

/// One connection. Members go bottom-up: buffers, then the endpoint, then the id.
struct node {
  fabric::cm_id id;
  std::unique_ptr<fabric::rc_endpoint> ep;
  fabric::registered_buffer send_buf;
  fabric::registered_buffer recv_buf;
  connection_result* res = nullptr;
  fabric::clock::time_point step_start;
  bool settled = false;      // connected, or failed to
  bool disconnected = false;

  void start_step() { step_start = fabric::clock::now(); }
  void end_step(step s) { res->step_us[static_cast<std::size_t>(s)] = micros(step_start, fabric::clock::now()); }
  void fail(std::string why) {
    if (res->error.empty()) res->error = std::move(why);
    settled = true;
  }
};

/// The run: one event channel, many connections, every phase bounded by
/// --timeout without progress.
class test {
public:
  test(const options& o, report& r) : o_(o), r_(r), channel_(std::make_unique<fabric::cm_channel>()) {}

  exit_code run_client();
  exit_code run_server();

private:
  void say(std::string_view line) const {
    if (!o_.out.json) fmt::print("{}\n", line);
  }
  node& add_node(fabric::cm_id id);
  void set_id_options(node& n) const;
  void init_node(node& n);
  void connect_phase(std::size_t wanted);
  void handle_connect_event(fabric::cm_event& ev);
  void send_messages();
  void await_completions(bool recv);
  void migrate();
  void await_disconnects(bool initiated_here);
  void destroy_nodes();
  exit_code verdict();
  node* node_of(rdma_cm_id* id) const { return id && id->context ? static_cast<node*>(id->context) : nullptr; }
  rdma_port_space port_space() const { return o_.port_space == "ib" ? RDMA_PS_IB : RDMA_PS_TCP; }
  fabric::addr_query query(const std::string& host) const;

  const options& o_;
  report& r_;
  std::unique_ptr<fabric::cm_channel> channel_;  // outlives every id
  fabric::addrinfo_ptr rai_;
  fabric::resolved_pair pair_;
  fabric::cm_id listener_;
  std::vector<std::unique_ptr<node>> nodes_;
  fabric::clock::time_point t0_;
};

fabric::addr_query test::query(const std::string& host) const {
  fabric::addr_query q;
  q.node = host;
  q.service = o_.port;
  q.port_space = port_space();
  if (o_.format == "ip" || o_.format == "ipv6") q.flags |= RAI_NUMERICHOST;
  if (o_.format == "gid") {
    q.flags |= RAI_NUMERICHOST | RAI_FAMILY;
    q.family = AF_IB;
  }
  return q;
}

node& test::add_node(fabric::cm_id id) {
  auto& res = r_.connections.emplace_back();
  res.index = static_cast<int>(r_.connections.size()) - 1;
  auto& n = *nodes_.emplace_back(std::make_unique<node>());
  n.res = &res;
  n.id = std::move(id);
  n.id->context = &n;
  return n;
}

void test::set_id_options(node& n) const {
  if (o_.tos >= 0) {
    auto tos = static_cast<std::uint8_t>(o_.tos);
    fabric::check_rc(rdma_set_option(n.id.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos), "rdma_set_option TOS");
  }
  if (o_.ack_timeout >= 0) {
    auto t = static_cast<std::uint8_t>(o_.ack_timeout);
    fabric::check_rc(rdma_set_option(n.id.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof t),
                     "rdma_set_option ACK_TIMEOUT");
  }
}

void test::init_node(node& n) {
  fabric::rc_config cfg;
  auto depth = static_cast<std::uint32_t>(std::max(o_.count, 1));
  cfg.send_depth = depth;
  cfg.recv_depth = depth;
  n.ep = std::make_unique<fabric::rc_endpoint>(n.id.get(), cfg);
  if (o_.count == 0 || o_.size == 0) return;
  auto bytes = static_cast<std::size_t>(o_.count) * static_cast<std::size_t>(o_.size);
  n.send_buf = fabric::registered_buffer(n.ep->pd(), bytes, IBV_ACCESS_LOCAL_WRITE);
  n.recv_buf = fabric::registered_buffer(n.ep->pd(), bytes, IBV_ACCESS_LOCAL_WRITE);
  auto size = static_cast<std::size_t>(o_.size);
  for (int k = 0; k < o_.count; ++k) {
    if (o_.verify) fabric::fill_payload(n.send_buf.bytes().subspan(k * size, size), static_cast<std::uint32_t>(k));
    ibv_sge sge{n.recv_buf.addr() + k * size, static_cast<std::uint32_t>(size), n.recv_buf.lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = static_cast<std::uint64_t>(k);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    fabric::post_recv(n.ep->qp(), wr);
  }
}

void test::handle_connect_event(fabric::cm_event& ev) {
  node* n = node_of(ev.id());
  switch (ev.type()) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      n->end_step(step::resolve_addr);
      set_id_options(*n);
      n->start_step();
      fabric::check_rc(rdma_resolve_route(n->id.get(), 2000), "rdma_resolve_route");
      break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      n->end_step(step::resolve_route);
      n->start_step();
      init_node(*n);
      n->end_step(step::create_qp);
      rdma_conn_param param{};
      param.responder_resources = 1;
      param.initiator_depth = 1;
      param.retry_count = 5;
      param.private_data = pair_.dst->ai_connect;
      param.private_data_len = static_cast<std::uint8_t>(pair_.dst->ai_connect_len);
      n->start_step();
      fabric::check_rc(rdma_connect(n->id.get(), &param), "rdma_connect");
      break;
    }
    case RDMA_CM_EVENT_CONNECT_REQUEST: {
      if (nodes_.size() >= static_cast<std::size_t>(o_.connections)) {
        say("cmatose: failing connection request");
        rdma_reject(ev.id(), nullptr, 0);
        break;
      }
      auto& m = add_node(fabric::cm_id(ev.id()));
      m.start_step();
      init_node(m);
      m.end_step(step::create_qp);
      set_id_options(m);
      m.start_step();
      fabric::check_rc(rdma_accept(m.id.get(), nullptr), "rdma_accept");
      break;
    }
    case RDMA_CM_EVENT_ESTABLISHED:
      n->end_step(step::connect);
      n->res->connected = true;
      n->settled = true;
      break;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
      say(fmt::format("cmatose: event: {}, error: {}", ev.name(), ev.status()));
      if (n) n->fail(fabric::event_error(ev, "connect").what());
      break;
    default:
      break;
  }
}

void test::connect_phase(std::size_t wanted) {
  // A server waits for its first client as long as it takes; after that,
  // and for a client from the start, silence for --timeout ends the phase.
  bool started = !o_.server.empty();
  auto until = started ? deadline::after(milliseconds(o_.timeout_ms)) : deadline::never();
  auto settled = [&] {
    return nodes_.size() >= wanted &&
           std::all_of(nodes_.begin(), nodes_.end(), [](const auto& n) { return n->settled; });
  };
  while (!settled()) {
    auto ev = channel_->next(until);
    if (!ev) {
      for (auto& n : nodes_)
        if (!n->settled) n->fail(fmt::format("no connection progress within {} ms", o_.timeout_ms));
      if (nodes_.size() < wanted)
        throw error(exit_code::timeout, fmt::format("only {} of {} clients connected within {} ms", nodes_.size(),
                                                    wanted, o_.timeout_ms));
      break;
    }
    if (!started) t0_ = fabric::clock::now();
    started = true;
    until = deadline::after(milliseconds(o_.timeout_ms));
    try {
      handle_connect_event(*ev);
    } catch (const error& e) {
      if (node* n = node_of(ev->id())) n->fail(e.what());
    }
  }
  r_.connect_seconds = std::chrono::duration<double>(fabric::clock::now() - t0_).count();
}

void test::send_messages() {
  auto size = static_cast<std::size_t>(o_.size);
  for (auto& n : nodes_) {
    if (!n->res->connected) continue;
    for (int k = 0; k < o_.count; ++k) {
      ibv_sge sge{};
      if (size) sge = {n->send_buf.addr() + k * size, static_cast<std::uint32_t>(size), n->send_buf.lkey()};
      ibv_send_wr wr{};
      wr.wr_id = static_cast<std::uint64_t>(k);
      wr.opcode = IBV_WR_SEND;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.sg_list = size ? &sge : nullptr;
      wr.num_sge = size ? 1 : 0;
      fabric::post_send(n->ep->qp(), wr);
      ++n->res->sent;
    }
  }
}

void test::await_completions(bool recv) {
  // Completions of every connection are polled in turn; a quiet spell of
  // --timeout ends the wait, and whatever is missing is counted as lost.
  std::vector<int> done(nodes_.size(), 0);
  auto until = deadline::after(milliseconds(o_.timeout_ms));
  auto size = static_cast<std::size_t>(o_.size);
  for (;;) {
    bool all = true, progress = false;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      auto& n = *nodes_[i];
      if (!n.res->connected || done[i] >= o_.count || !n.res->error.empty()) continue;
      ibv_wc wc[16];
      auto got = n.ep->cq().poll(wc);
      for (std::size_t w = 0; w < got; ++w) {
        if (wc[w].status != IBV_WC_SUCCESS) {
          n.fail(fabric::wc_error(wc[w], recv ? "receive" : "send").what());
          break;
        }
        bool is_recv = wc[w].opcode == IBV_WC_RECV;
        if (is_recv) {
          ++n.res->received;
          if (o_.verify && size &&
              !fabric::check_payload(n.recv_buf.bytes().subspan(wc[w].wr_id * size, std::min<std::size_t>(wc[w].byte_len, size))))
            ++n.res->verify_failures;
        }
        if (is_recv == recv) ++done[i];
        progress = true;
      }
      if (done[i] < o_.count && n.res->error.empty()) all = false;
    }
    if (all) return;
    if (progress) until = deadline::after(milliseconds(o_.timeout_ms));
    if (until.expired()) {
      for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i]->res->connected && done[i] < o_.count)
          nodes_[i]->fail(fmt::format("{} of {} {} within {} ms", done[i], o_.count, recv ? "messages arrived" : "sends completed",
                                      o_.timeout_ms));
      return;
    }
    if (!progress) fabric::wait_readable(-1, deadline::after(milliseconds(1)));
  }
}

void test::migrate() {
  say("migrating to new event channel");
  auto fresh = std::make_unique<fabric::cm_channel>();
  if (listener_) fresh->adopt(listener_.get());
  for (auto& n : nodes_) fresh->adopt(n->id.get());
  channel_ = std::move(fresh);
}

void test::await_disconnects(bool initiated_here) {
  if (initiated_here) {
    for (auto& n : nodes_) {
      if (!n->res->connected) continue;
      n->start_step();
      rdma_disconnect(n->id.get());
    }
  }
  auto pending = [&] {
    return std::count_if(nodes_.begin(), nodes_.end(), [](const auto& n) { return n->res->connected && !n->disconnected; });
  };
  auto until = deadline::after(milliseconds(o_.timeout_ms));
  while (pending() > 0) {
    auto ev = channel_->next(until);
    if (!ev) {
      for (auto& n : nodes_)
        if (n->res->connected && !n->disconnected) n->fail(fmt::format("no disconnect within {} ms", o_.timeout_ms));
      return;
    }
    until = deadline::after(milliseconds(o_.timeout_ms));
    node* n = node_of(ev->id());
    if (ev->type() != RDMA_CM_EVENT_DISCONNECTED || !n || n->disconnected) continue;
    if (!initiated_here) {
      n->start_step();
      rdma_disconnect(n->id.get());
    }
    n->end_step(step::disconnect);
    n->disconnected = true;
  }
}

void test::destroy_nodes() {
  for (auto& n : nodes_) {
    auto t = fabric::clock::now();
    auto* res = n->res;
    n.reset();
    res->step_us[static_cast<std::size_t>(step::destroy)] = micros(t, fabric::clock::now());
  }
  nodes_.clear();
}

exit_code test::verdict() {
  int failed = 0, lost = 0, bad = 0;
  for (const auto& c : r_.connections) {
    if (!c.connected) ++failed;
    else lost += std::max(0, o_.count - c.received);
    bad += c.verify_failures;
  }
  if (o_.stats && !o_.out.json)
    for (const auto& line : format_stats(r_)) say(line);
  auto code = exit_code::ok;
  std::string why;
  if (failed) {
    code = exit_code::connect_failed;
    why = fmt::format("{} of {} connections failed", failed, r_.connections.size());
    for (const auto& c : r_.connections)
      if (!c.error.empty()) {
        why += ": " + c.error;
        break;
      }
  } else if (lost || bad) {
    code = exit_code::test_failed;
    why = fmt::format("{} messages lost, {} failed verification", lost, bad);
  }
  say("test complete");
  say(fmt::format("return status {}", static_cast<int>(code)));
  if (code != exit_code::ok) throw error(code, why);
  return code;
}

exit_code test::run_client() {
  say("cmatose: starting client");
  pair_ = fabric::resolve_pair(query(o_.server), o_.bind);
  say("cmatose: connecting");
  t0_ = fabric::clock::now();
  for (int i = 0; i < o_.connections; ++i) {
    auto t = fabric::clock::now();
    auto& n = add_node(channel_->create_id(port_space()));
    n.res->step_us[static_cast<std::size_t>(step::create_id)] = micros(t, fabric::clock::now());
  }
  for (auto& n : nodes_) {
    n->start_step();
    if (rdma_resolve_addr(n->id.get(), pair_.src_addr(), pair_.dst_addr(), 2000) != 0)
      n->fail(fmt::format("rdma_resolve_addr: {}", std::strerror(errno)));
  }
  connect_phase(nodes_.size());
  // As the original, a failed connection skips the data transfers.
  bool all_connected = std::all_of(r_.connections.begin(), r_.connections.end(), [](const auto& c) { return c.connected; });
  if (o_.count && all_connected) {
    say("receiving data transfers");
    await_completions(true);
    say("sending replies");
    send_messages();
    await_completions(false);
    say("data transfers complete");
  }
  if (o_.migrate) migrate();
  await_disconnects(false);
  destroy_nodes();
  return verdict();
}

exit_code test::run_server() {
  say("cmatose: starting server");
  auto q = query(o_.bind);
  q.flags |= RAI_PASSIVE;
  rai_ = fabric::resolve(q);
  listener_ = channel_->create_id(port_space());
  fabric::check_rc(rdma_bind_addr(listener_.get(), rai_->ai_src_addr),
                   fmt::format("rdma_bind_addr {}", fabric::format_addr(rai_->ai_src_addr)));
  fabric::check_rc(rdma_listen(listener_.get(), 0), "rdma_listen");
  connect_phase(static_cast<std::size_t>(o_.connections));
  if (o_.count) {
    say("initiating data transfers");
    send_messages();
    say("completing sends");
    await_completions(false);
    say("receiving data transfers");
    await_completions(true);
    say("data transfers complete");
  }
  if (o_.migrate) migrate();
  say("cmatose: disconnecting");
  await_disconnects(true);
  say("disconnected");
  destroy_nodes();
  return verdict();
}

}  // namespace

exit_code run(const options& o, report& r) {
  r.opt = o;
  r.role = o.server.empty() ? "server" : "client";
  // Nodes point into this vector: it must never reallocate.
  r.connections.reserve(static_cast<std::size_t>(o.connections));
  test t(o, r);
  return o.server.empty() ? t.run_server() : t.run_client();
}

}  // namespace ucmatose
