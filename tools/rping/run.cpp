#include "rping.hpp"

#include "link.hpp"
#include "protocol.hpp"

#include "fabric/verbs/addr.hpp"
#include "fabric/base/meet.hpp"
#include "fabric/cm/rc.hpp"
#include "fabric/base/wait.hpp"

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

namespace {

fabric::rc_config make_config(const options& o) {
  fabric::rc_config cfg;
  cfg.send_depth = 16;
  cfg.recv_depth = 2;
  cfg.max_inline = info_size;
  cfg.busy_poll = o.busy_poll;
  cfg.self_created_qp = o.self_created_qp;
  return cfg;
}

/// Debug lines (-d) on stderr.
void debug(const options& o, fabric::console& con, const std::string& text) {
  if (o.debug) con.diagnostic("rping: " + text);
}

/// A connection that ended, well or not: its error, and its result event.
void conclude(connection_result& res, fabric::console& con, const std::string& error = {}) {
  res.error = error;
  con.event("result", [&] { return result_json(res); });
}

/// A ping's clock: read only when its time is shown (--stats, JSON). The
/// originals time nothing, and where a clock read is a system call (under
/// emulation, an emulated timer's read) two a ping are a part of its time.
class ping_clock {
public:
  ping_clock(const options& o, const fabric::console& con)
      : on_(o.stats || con.mode() != fabric::output_mode::human) {}
  void start() {
    if (on_) t0_ = fabric::clock::now();
  }
  /// The ping's time in microseconds, added to `rtt`; 0 when untimed.
  double stop(fabric::latency_stats& rtt) const {
    if (!on_) return 0;
    double us = fabric::us_since(t0_);
    rtt.add(us);
    return us;
  }

private:
  bool on_;
  fabric::clock::time_point t0_;
};

nlohmann::json ping_event(const options& o, const connection_result& res, std::uint64_t seq, double rtt_us,
                          std::string_view data, bool verified) {
  // What was not asked for (-v, -V) is null, as every missing value is.
  return {{"connection", res.index},
          {"seq", seq},
          {"rtt_us", rtt_us},
          {"data", o.verbose ? nlohmann::json(data) : nlohmann::json(nullptr)},
          {"verified", o.verify ? nlohmann::json(verified) : nlohmann::json(nullptr)}};
}

// ---- client ------------------------------------------------------------------

/// A client connection: the link's buffers go before the connection's PD.
struct client_connection {
  fabric::rc_client conn;
  link lk;
  client_connection(fabric::rc_client c, const options& o)
      : conn(std::move(c)), lk(conn.channel, *conn.endpoint, o.size, true, o.timeout.each()) {}
};

std::unique_ptr<client_connection> connect_client(const options& o, fabric::console& con) {
  fabric::rc_target target{o.addr, o.source, o.port};
  // --retry: a server not up yet (refused, or silent) is dialled again.
  auto retryable = [&](const error& e) {
    return o.retry_ms > 0 && (e.code() == exit_code::connect_failed || e.code() == exit_code::timeout);
  };
  return fabric::dial_until_listening(
      deadline::after(milliseconds(o.retry_ms)),
      [&] {
        auto c = std::make_unique<client_connection>(fabric::prepare_rc_client(target, make_config(o), o.timeout), o);
        c->lk.post_recv();
        fabric::connect_rc(c->conn, o.timeout.next());
        return c;
      },
      retryable, [&](const error& e) { debug(o, con, fmt::format("{}; retrying", e.what())); });
}

void ping_server(const options& o, connection_result& res, fabric::console& con) {
  auto c = connect_client(o, con);
  res.peer = fabric::peer_name(c->conn.id.get());
  debug(o, con, fmt::format("connected to {}", res.peer));
  con.event("connected", [&] { return nlohmann::json{{"index", res.index}, {"peer", res.peer}}; });
  link& lk = c->lk;
  auto start = lk.start_buf().bytes();
  auto sink = lk.rdma_buf().bytes();
  ping_clock timer(o, con);
  try {
    for (std::uint64_t ping = 0; o.count == 0 || ping < o.count; ++ping) {
      fill_ping(start, ping);
      timer.start();
      lk.send_info(fabric::advertise(lk.start_buf()));
      lk.await_info();  // the server READ our start buffer
      lk.send_info(fabric::advertise(lk.rdma_buf()));
      lk.await_info();  // the server WROTE it back into our rdma buffer
      double rtt = timer.stop(res.rtt);
      ++res.pings;
      bool verified = !o.verify || std::memcmp(start.data(), sink.data(), start.size()) == 0;
      if (!verified) {
        ++res.verify_errors;
        con.diagnostic(fmt::format("rping: ping {}: data mismatch", ping));
      }
      auto text = ping_text(sink);
      if (o.verbose) con.line("ping data: " + fabric::printable(text));
      con.event("ping", [&] { return ping_event(o, res, ping, rtt, text, verified); });
      if (o.interval_ms > 0) fabric::wait_readable(-1, deadline::after(milliseconds(o.interval_ms)));
    }
  } catch (const peer_gone&) {
    throw error(exit_code::connect_failed, fmt::format("server {} disconnected after {} pings", res.peer, res.pings));
  }
  rdma_disconnect(c->conn.id.get());
  // The server's answer ends the connection; the original reports it.
  auto until = o.timeout.next();
  while (auto ev = c->conn.channel.next(until))
    if (ev->type() == RDMA_CM_EVENT_DISCONNECTED) {
      con.note("client DISCONNECT EVENT...");
      break;
    }
}

fabric::verdict run_client(const options& o, report& r, fabric::console& con) {
  auto& res = r.connections.emplace_back();
  try {
    ping_server(o, res, con);
  } catch (const std::exception& e) {
    conclude(res, con, e.what());
    throw;
  }
  conclude(res, con);
  if (o.stats) con.line("rping: " + format_stats(res));
  if (res.verify_errors > 0)
    return {exit_code::test_failed, fmt::format("{} of {} pings failed verification", res.verify_errors, res.pings)};
  return {};
}

// ---- server ------------------------------------------------------------------

/// Serves one client on `id`, whose events arrive on `channel`: accept,
/// then READ and WRITE back each ping until the client disconnects.
void serve(fabric::cm_channel& channel, fabric::cm_id id, const options& o, connection_result& res,
           fabric::console& con) {
  res.peer = fabric::peer_name(id.get());
  fabric::rc_endpoint ep(id.get(), make_config(o));
  link lk(channel, ep, o.size, false, o.timeout.each());
  lk.post_recv();
  fabric::accept_rc(channel, id.get(), ep, o.timeout.next());
  debug(o, con, fmt::format("accepted {}", res.peer));
  con.event("connected", [&] { return nlohmann::json{{"index", res.index}, {"peer", res.peer}}; });
  auto buf = lk.rdma_buf().bytes();
  const buffer_info go_ahead{};
  ping_clock timer(o, con);
  try {
    for (;;) {
      buffer_info source;
      try {
        source = lk.await_info();
      } catch (const peer_gone&) {
        // The client is done; the original says so in these words.
        con.note("server DISCONNECT EVENT...");
        con.note("wait for RDMA_READ_ADV state 10");
        break;
      }
      timer.start();
      if (source.size > buf.size())
        throw error(exit_code::protocol,
                    fmt::format("client advertised {} bytes, more than this server's -S {}", source.size, buf.size()));
      buffer_info sink = lk.read_then_send(source, source.size, go_ahead);
      auto text = ping_text(buf.first(source.size));
      if (o.verbose) con.line("server ping data: " + fabric::printable(text));
      // Echo what was read, up to and including its NUL, as the original
      // does, but never more than the client's buffer or ours holds.
      auto length = static_cast<std::uint32_t>(std::min<std::size_t>({text.size() + 1, sink.size, buf.size()}));
      lk.write_then_send(sink, length, go_ahead);
      double rtt = timer.stop(res.rtt);
      con.event("ping", [&] { return ping_event(o, res, res.pings, rtt, text, true); });
      ++res.pings;
    }
  } catch (const peer_gone&) {
    throw error(exit_code::connect_failed, fmt::format("client {} disconnected in the middle of ping {}", res.peer, res.pings));
  }
  ep.fail_self_created_qp();
  rdma_disconnect(id.get());
}

/// Waits for the next connection request on a listening channel; an
/// empty id when the deadline passed first.
fabric::cm_id next_request(fabric::cm_channel& channel, const deadline& until) {
  for (;;) {
    auto ev = channel.next(until);
    if (!ev) return {};
    if (ev->type() == RDMA_CM_EVENT_CONNECT_REQUEST) return fabric::cm_id(ev->id());
    if (ev->type() == RDMA_CM_EVENT_DEVICE_REMOVAL) throw fabric::event_error(*ev, "listening");
    // Events of connections that already ended (DISCONNECTED, TIMEWAIT_EXIT) need no action.
  }
}

fabric::verdict run_single_server(const options& o, report& r, fabric::console& con) {
  fabric::cm_channel listening;
  auto listener = fabric::listen_rc(listening, o.addr, o.port, 3);
  auto id = next_request(listening, deadline::never());
  // One client only: the connection gets a channel of its own and the
  // listener goes, so that a second client is refused by the CM instead
  // of reaching this connection's events.
  fabric::cm_channel channel;
  channel.adopt(id.get());
  listener.reset();
  auto& res = r.connections.emplace_back();
  try {
    serve(channel, std::move(id), o, res, con);
  } catch (const std::exception& e) {
    conclude(res, con, e.what());
    throw;
  }
  conclude(res, con);
  if (o.stats) con.line(fmt::format("rping: client {}: {}", res.peer, format_stats(res)));
  return {};
}

/// One client of a persistent server, on its own event channel and thread,
/// so that a misbehaving or vanished client only ends its own connection.
struct worker {
  fabric::cm_channel channel;
  connection_result result;
  std::atomic<bool> done{false};
  std::jthread thread;  // joined first on destruction
};

fabric::verdict run_persistent_server(const options& o, report& r, fabric::console& con) {
  fabric::cm_channel channel;
  auto listener = fabric::listen_rc(channel, o.addr, o.port, 16);
  std::list<worker> workers;
  std::size_t accepted = 0;
  auto reap = [&](bool all) {
    for (auto it = workers.begin(); it != workers.end();) {
      if (!all && !it->done.load()) {
        ++it;
        continue;
      }
      if (it->thread.joinable()) it->thread.join();
      if (o.stats)
        con.line(fmt::format("rping: client {}: {}{}", it->result.peer, format_stats(it->result),
                             it->result.error.empty() ? "" : ", error: " + it->result.error));
      // Only the document (-j) lists every connection at the end; the
      // other modes told of each as it ended, and keep the totals.
      if (con.mode() == fabric::output_mode::document)
        r.connections.push_back(std::move(it->result));
      else
        r.fold(it->result);
      it = workers.erase(it);
    }
  };
  std::optional<error> stopped;
  try {
    for (;;) {
      auto id = next_request(channel, deadline::after(milliseconds(200)));
      reap(false);
      if (!id) continue;
      auto& w = workers.emplace_back();
      w.result.index = accepted++;
      // The request was acknowledged in next_request, so the id may move.
      w.channel.adopt(id.get());
      w.thread = std::jthread([&o, &con, &w, id = std::move(id)]() mutable {
        try {
          serve(w.channel, std::move(id), o, w.result, con);
          conclude(w.result, con);
        } catch (const std::exception& e) {
          if (!fabric::interrupted()) con.diagnostic(fmt::format("rping: client {}: {}", w.result.peer, e.what()));
          try {
            conclude(w.result, con, e.what());
          } catch (const std::exception&) {
            // stdout is gone: the main thread stops the run.
          }
        }
        w.done.store(true);
      });
    }
  } catch (const error& e) {
    stopped = e;
  }
  reap(true);
  con.line(served_line(r));
  // A persistent server ends only when told to: that is its normal end.
  if (stopped) return {stopped->code(), stopped->what()};
  return {};
}

}  // namespace

fabric::verdict run(const options& o, report& r, fabric::console& con) {
  r.role = o.server ? "server" : "client";
  con.set_role(r.role);
  if (o.client) return run_client(o, r, con);
  return o.persistent ? run_persistent_server(o, r, con) : run_single_server(o, r, con);
}

}  // namespace rping
