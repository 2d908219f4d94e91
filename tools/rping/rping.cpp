#include "rping.hpp"

#include "link.hpp"
#include "protocol.hpp"

#include "fabric/addr.hpp"
#include "fabric/completion.hpp"
#include "fabric/rc.hpp"
#include "fabric/wait.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace rping {

using fabric::deadline;
using fabric::error;
using fabric::exit_code;
using std::chrono::milliseconds;

void add_options(CLI::App& app, options& opt) {
  auto* server = app.add_flag("-s,--server", opt.server, "Server side; to bind to any IPv6 address use -a ::0");
  app.add_flag("-c,--client", opt.client, "Client side")->excludes(server);
  app.add_option("-a,--addr", opt.addr, "Address: the server a client connects to, or the address a server binds (default: any IPv4)")
      ->type_name(std::string(fabric::completion::host_type));
  app.add_option("-I,--source", opt.source, "Source address a client binds to")->type_name(std::string(fabric::completion::host_type));
  app.add_option("-p,--port", opt.port, "Port")->capture_default_str();
  app.add_option("-C,--count", opt.count, "Pings to do; 0 pings forever")->capture_default_str();
  app.add_option("-S,--size", opt.size, "Ping data size in bytes")
      ->check(CLI::Range(min_size, max_size))
      ->capture_default_str();
  app.add_flag("-v,--verbose", opt.verbose, "Print ping data");
  app.add_flag("-V,--verify", opt.verify, "Verify ping data");
  app.add_flag("-d,--debug", opt.debug, "Print debug messages on stderr");
  app.add_flag("-P,--persistent", opt.persistent, "Persistent server: serve clients concurrently until interrupted");
  app.add_flag("-q,--self-qp", opt.self_created_qp, "Use a self-created QP whose state changes rping drives");
  app.add_flag("--stats", opt.stats, "Print a latency summary (min p50 p99 p99.9 max mean stdev)");
  app.add_option("--interval", opt.interval_ms, "Milliseconds to pause between pings")->check(CLI::Range(0, 3'600'000));
  app.add_flag("--busy-poll", opt.busy_poll, "Poll the completion queue instead of sleeping on it (lowest latency)");
  fabric::cli::add_timeout_option(app, opt.timeout_ms, "Milliseconds any wait after connecting may take");
  app.add_flag("--retry{10000}", opt.retry_ms,
               "Client: retry connecting for this many milliseconds (default 10000) while no server answers");
}

std::uint64_t report::total_pings() const {
  std::uint64_t n = 0;
  for (const auto& c : connections) n += c.pings;
  return n;
}

std::uint64_t report::total_verify_failures() const {
  std::uint64_t n = 0;
  for (const auto& c : connections) n += c.verify_failures;
  return n;
}

namespace {

nlohmann::json latency_json(const std::vector<double>& rtt) { return fabric::summarize(rtt); }

nlohmann::json options_json(const options& o) {
  nlohmann::json j{{"server", o.server}, {"client", o.client}, {"port", o.port}, {"count", o.count}, {"size", o.size},
                   {"verbose", o.verbose > 0}, {"verify", o.verify}, {"persistent", o.persistent},
                   {"self_qp", o.self_created_qp}, {"interval", o.interval_ms}, {"busy_poll", o.busy_poll},
                   {"timeout", o.timeout_ms}, {"retry", o.retry_ms}};
  if (!o.addr.empty()) j["addr"] = o.addr;
  if (!o.source.empty()) j["source"] = o.source;
  return j;
}

}  // namespace

void to_json(nlohmann::json& j, const report& r) {
  j["role"] = r.role;
  j["options"] = options_json(r.opt);
  j["pings"] = r.total_pings();
  j["verify_failures"] = r.total_verify_failures();
  std::vector<double> all;
  for (const auto& c : r.connections) all.insert(all.end(), c.rtt_us.begin(), c.rtt_us.end());
  j["latency_us"] = latency_json(all);
  nlohmann::json conns = nlohmann::json::array();
  for (const auto& c : r.connections) {
    nlohmann::json cj{{"pings", c.pings}, {"verify_failures", c.verify_failures}, {"latency_us", latency_json(c.rtt_us)}};
    if (!c.peer.empty()) cj["peer"] = c.peer;
    cj["error"] = c.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.error);
    if (r.opt.verbose) cj["data"] = c.data;
    conns.push_back(std::move(cj));
  }
  j["connections"] = std::move(conns);
}

std::string format_stats(const connection_result& c) {
  return fmt::format("{} pings, {} verify failures, rtt {}", c.pings, c.verify_failures,
                     fabric::format_summary(fabric::summarize(c.rtt_us)));
}

namespace {

/// Human output shared by concurrent connections: whole lines, in order.
class printer {
public:
  explicit printer(const options& o) : opt_(o) {}
  void line(const std::string& text) {
    if (opt_.out.json) return;
    std::lock_guard lock(mutex_);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  /// The original's lines on stderr that every run prints.
  void note(const std::string& text) {
    if (opt_.out.json) return;
    std::lock_guard lock(mutex_);
    fmt::print(stderr, "{}\n", text);
  }
  void debug(const std::string& text) {
    if (!opt_.debug) return;
    std::lock_guard lock(mutex_);
    fmt::print(stderr, "rping: {}\n", text);
  }

private:
  const options& opt_;
  std::mutex mutex_;
};

fabric::rc_config make_config(const options& o) {
  fabric::rc_config cfg;
  cfg.send_depth = 16;
  cfg.recv_depth = 2;
  cfg.max_inline = info_size;
  cfg.busy_poll = o.busy_poll;
  cfg.self_created_qp = o.self_created_qp;
  return cfg;
}

// ---- client ------------------------------------------------------------------

/// A client connection: the link's buffers go before the connection's PD.
struct client_connection {
  fabric::rc_client conn;
  link lk;
  client_connection(fabric::rc_client c, const options& o)
      : conn(std::move(c)), lk(conn.channel, *conn.endpoint, o.size, true, milliseconds(o.timeout_ms)) {}
};

std::unique_ptr<client_connection> connect_client(const options& o, printer& out) {
  fabric::rc_target target{o.addr, o.source, o.port, milliseconds(2000)};
  auto retry_until = deadline::after(milliseconds(o.retry_ms));
  for (;;) {
    try {
      auto until = deadline::after(milliseconds(o.timeout_ms));
      auto c = std::make_unique<client_connection>(fabric::prepare_rc_client(target, make_config(o), until), o);
      c->lk.post_recv();
      fabric::connect_rc(c->conn, until);
      return c;
    } catch (const error& e) {
      bool retryable = e.code() == exit_code::connect_failed || e.code() == exit_code::timeout;
      if (!retryable || o.retry_ms == 0 || retry_until.expired()) throw;
      out.debug(fmt::format("{}; retrying", e.what()));
      fabric::wait_readable(-1, deadline::after(milliseconds(200)).min(retry_until));
    }
  }
}

exit_code run_client(const options& o, report& r, printer& out) {
  auto& res = r.connections.emplace_back();
  auto c = connect_client(o, out);
  res.peer = fabric::peer_name(c->conn.id.get());
  out.debug(fmt::format("connected to {}", res.peer));
  link& lk = c->lk;
  auto start = lk.start_buf().bytes();
  auto sink = lk.rdma_buf().bytes();
  // No allocation on the hot path for a bounded run.
  if (o.count > 0) res.rtt_us.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(o.count, 1u << 24)));
  try {
    for (std::uint64_t ping = 0; o.count == 0 || ping < o.count; ++ping) {
      fill_ping(start, ping);
      auto t0 = fabric::clock::now();
      lk.send_info(lk.advertise(lk.start_buf()));
      lk.await_info();  // the server READ our start buffer
      lk.send_info(lk.advertise(lk.rdma_buf()));
      lk.await_info();  // the server WROTE it back into our rdma buffer
      res.rtt_us.push_back(fabric::us_since(t0));
      ++res.pings;
      if (o.verify && std::memcmp(start.data(), sink.data(), start.size()) != 0) {
        ++res.verify_failures;
        fmt::print(stderr, "rping: ping {}: data mismatch\n", ping);
      }
      if (o.verbose) {
        std::string text(ping_text(sink));
        out.line("ping data: " + text);
        if (o.out.json) res.data.push_back(std::move(text));
      }
      if (o.interval_ms > 0) fabric::wait_readable(-1, deadline::after(milliseconds(o.interval_ms)));
    }
  } catch (const peer_gone&) {
    throw error(exit_code::connect_failed, fmt::format("server {} disconnected after {} pings", res.peer, res.pings));
  }
  rdma_disconnect(c->conn.id.get());
  // The server's answer ends the connection; the original reports it.
  auto until = deadline::after(milliseconds(o.timeout_ms));
  while (auto ev = c->conn.channel.next(until))
    if (ev->type() == RDMA_CM_EVENT_DISCONNECTED) {
      out.note("client DISCONNECT EVENT...");
      break;
    }
  if (o.stats) out.line("rping: " + format_stats(res));
  return res.verify_failures ? exit_code::test_failed : exit_code::ok;
}

// ---- server ------------------------------------------------------------------

/// Serves one client on `id`, whose events arrive on `channel`: accept,
/// then READ and WRITE back each ping until the client disconnects.
void serve(fabric::cm_channel& channel, fabric::cm_id id, const options& o, connection_result& res, printer& out) {
  res.peer = fabric::peer_name(id.get());
  fabric::rc_endpoint ep(id.get(), make_config(o));
  link lk(channel, ep, o.size, false, milliseconds(o.timeout_ms));
  lk.post_recv();
  fabric::accept_rc(channel, id.get(), ep, deadline::after(milliseconds(o.timeout_ms)));
  out.debug(fmt::format("accepted {}", res.peer));
  auto buf = lk.rdma_buf().bytes();
  const buffer_info go_ahead{};
  try {
    for (;;) {
      buffer_info source;
      try {
        source = lk.await_info();
      } catch (const peer_gone&) {
        // The client is done; the original says so in these words.
        out.note("server DISCONNECT EVENT...");
        out.note("wait for RDMA_READ_ADV state 10");
        break;
      }
      auto t0 = fabric::clock::now();
      if (source.size > buf.size())
        throw error(exit_code::protocol,
                    fmt::format("client advertised {} bytes, more than this server's -S {}", source.size, buf.size()));
      lk.rdma(IBV_WR_RDMA_READ, source, source.size);
      std::string text(ping_text(buf.first(source.size)));
      if (o.verbose) out.line("server ping data: " + text);
      lk.send_info(go_ahead);
      buffer_info sink = lk.await_info();
      // Echo what was read, up to and including its NUL, as the original
      // does, but never more than the client's buffer or ours holds.
      auto length = static_cast<std::uint32_t>(std::min<std::size_t>({text.size() + 1, sink.size, buf.size()}));
      lk.rdma(IBV_WR_RDMA_WRITE, sink, length);
      lk.send_info(go_ahead);
      res.rtt_us.push_back(fabric::us_since(t0));
      ++res.pings;
      if (o.verbose && o.out.json) res.data.push_back(std::move(text));
    }
  } catch (const peer_gone&) {
    throw error(exit_code::connect_failed, fmt::format("client {} disconnected in the middle of ping {}", res.peer, res.pings));
  }
  ep.fail_self_created_qp();
  rdma_disconnect(id.get());
}

/// Waits for the next connection request on a listening channel.
fabric::cm_id next_request(fabric::cm_channel& channel, const deadline& until, bool& timed_out) {
  timed_out = false;
  for (;;) {
    auto ev = channel.next(until);
    if (!ev) {
      timed_out = true;
      return {};
    }
    if (ev->type() == RDMA_CM_EVENT_CONNECT_REQUEST) return fabric::cm_id(ev->id());
    if (ev->type() == RDMA_CM_EVENT_DEVICE_REMOVAL) throw fabric::event_error(*ev, "listening");
    // Events of connections that already ended (DISCONNECTED, TIMEWAIT_EXIT) need no action.
  }
}

exit_code run_single_server(const options& o, report& r, printer& out) {
  fabric::cm_channel channel;
  auto listener = fabric::listen_rc(channel, o.addr, o.port, 3);
  bool timed_out = false;
  auto id = next_request(channel, deadline::never(), timed_out);
  auto& res = r.connections.emplace_back();
  serve(channel, std::move(id), o, res, out);
  if (o.stats) out.line(fmt::format("rping: client {}: {}", res.peer, format_stats(res)));
  return exit_code::ok;
}

/// One client of a persistent server, on its own event channel and thread,
/// so that a misbehaving or vanished client only ends its own connection.
struct worker {
  fabric::cm_channel channel;
  connection_result result;
  std::atomic<bool> done{false};
  std::jthread thread;  // joined first on destruction
};

exit_code run_persistent_server(const options& o, report& r, printer& out) {
  fabric::cm_channel channel;
  auto listener = fabric::listen_rc(channel, o.addr, o.port, 16);
  std::list<worker> workers;
  auto reap = [&](bool all) {
    for (auto it = workers.begin(); it != workers.end();) {
      if (!all && !it->done.load()) {
        ++it;
        continue;
      }
      if (it->thread.joinable()) it->thread.join();
      if (o.stats)
        out.line(fmt::format("rping: client {}: {}{}", it->result.peer, format_stats(it->result),
                             it->result.error.empty() ? "" : ", error: " + it->result.error));
      r.connections.push_back(std::move(it->result));
      it = workers.erase(it);
    }
  };
  try {
    for (;;) {
      bool timed_out = false;
      auto id = next_request(channel, deadline::after(milliseconds(200)), timed_out);
      reap(false);
      if (timed_out) continue;
      auto& w = workers.emplace_back();
      // The request was acknowledged in next_request, so the id may move.
      w.channel.adopt(id.get());
      w.thread = std::jthread([&o, &out, &w, id = std::move(id)]() mutable {
        try {
          serve(w.channel, std::move(id), o, w.result, out);
        } catch (const std::exception& e) {
          w.result.error = e.what();
          if (!fabric::interrupted()) fmt::print(stderr, "rping: client {}: {}\n", w.result.peer, e.what());
        }
        w.done.store(true);
      });
    }
  } catch (const error& e) {
    if (e.code() != exit_code::interrupted) {
      reap(true);
      throw;
    }
  }
  reap(true);
  std::size_t failed = 0;
  for (const auto& c : r.connections) failed += c.error.empty() ? 0 : 1;
  out.line(fmt::format("rping: served {} clients, {} pings, {} failed", r.connections.size(), r.total_pings(), failed));
  return failed ? exit_code::test_failed : exit_code::ok;
}

}  // namespace

exit_code run(const options& o, report& r) {
  r.opt = o;
  if (!o.server && !o.client) throw error(exit_code::usage, "choose a side: -s (server) or -c (client)");
  if (o.client && o.addr.empty()) throw error(exit_code::usage, "a client needs -a ADDR, the server's address");
  if (o.persistent && !o.server) throw error(exit_code::usage, "-P (persistent) is a server option");
  r.role = o.server ? "server" : "client";
  printer out(o);
  if (o.client) return run_client(o, r, out);
  return o.persistent ? run_persistent_server(o, r, out) : run_single_server(o, r, out);
}

}  // namespace rping
