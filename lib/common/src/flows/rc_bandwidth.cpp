#include "fabric/flows/rc_bandwidth.hpp"

#include "fabric/base/big_endian.hpp"
#include "fabric/cm/rc.hpp"
#include "fabric/verbs/ports.hpp"
#include "fabric/verbs/verbs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

namespace fabric {

namespace bandwidth_wire {

namespace {

constexpr std::array<std::uint8_t, 4> mark{'F', 'S', 'B', 'W'};
constexpr std::uint8_t version = 1;
constexpr std::uint8_t flag_bidirectional = 1;

void put_head(std::uint8_t* p, std::uint8_t flags) noexcept {
  std::memcpy(p, mark.data(), mark.size());
  p[4] = version;
  p[5] = flags;
}

/// The flags of a head of this version, or nullopt.
std::optional<std::uint8_t> read_head(std::span<const std::byte> bytes, std::size_t need) noexcept {
  if (bytes.size() < need) return std::nullopt;
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  if (std::memcmp(p, mark.data(), mark.size()) != 0 || p[4] != version) return std::nullopt;
  return p[5];
}

void put_buffer(std::uint8_t* p, const hello& h) noexcept {
  big_endian::store_be64(p, h.addr);
  big_endian::store_be32(p + 8, h.rkey);
  big_endian::store_be32(p + 12, h.size);
}

bool read_buffer(const std::uint8_t* p, hello& h) noexcept {
  h.addr = big_endian::load_be64(p);
  h.rkey = big_endian::load_be32(p + 8);
  h.size = big_endian::load_be32(p + 12);
  return h.size >= 1 && h.size <= max_write_bytes;
}

}  // namespace

std::array<std::byte, request_bytes> encode_request(const hello& h) noexcept {
  std::array<std::byte, request_bytes> out{};
  auto* p = reinterpret_cast<std::uint8_t*>(out.data());
  put_head(p, h.bidirectional ? flag_bidirectional : 0);
  put_buffer(p + 8, h);
  big_endian::store_be64(p + 24, h.count);
  big_endian::store_be32(p + 32, h.duration_ms);
  return out;
}

std::array<std::byte, reply_bytes> encode_reply(const hello& h) noexcept {
  std::array<std::byte, reply_bytes> out{};
  auto* p = reinterpret_cast<std::uint8_t*>(out.data());
  put_head(p, 0);
  put_buffer(p + 8, h);
  return out;
}

std::optional<hello> decode_request(std::span<const std::byte> bytes) noexcept {
  auto flags = read_head(bytes, request_bytes);
  if (!flags || (*flags & ~flag_bidirectional) != 0) return std::nullopt;
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  hello h;
  h.bidirectional = (*flags & flag_bidirectional) != 0;
  if (!read_buffer(p + 8, h)) return std::nullopt;
  h.count = big_endian::load_be64(p + 24);
  h.duration_ms = big_endian::load_be32(p + 32);
  // A plan writes for a count or for a time, within the limits a plan has.
  if (h.count > max_write_count || h.duration_ms > static_cast<std::uint64_t>(max_write_time.count()) ||
      (h.count == 0 && h.duration_ms == 0))
    return std::nullopt;
  return h;
}

std::optional<hello> decode_reply(std::span<const std::byte> bytes) noexcept {
  auto flags = read_head(bytes, reply_bytes);
  if (!flags || *flags != 0) return std::nullopt;
  hello h;
  h.bidirectional = false;
  if (!read_buffer(reinterpret_cast<const std::uint8_t*>(bytes.data()) + 8, h)) return std::nullopt;
  return h;
}

std::array<std::byte, done_bytes> encode_done(const transfer& t) noexcept {
  std::array<std::byte, done_bytes> out{};
  auto* p = reinterpret_cast<std::uint8_t*>(out.data());
  big_endian::store_be64(p, t.bytes);
  big_endian::store_be64(p + 8, static_cast<std::uint64_t>(std::llround(std::max(t.seconds, 0.0) * 1e9)));
  return out;
}

std::optional<transfer> decode_done(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() != done_bytes) return std::nullopt;
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  transfer t;
  t.bytes = big_endian::load_be64(p);
  auto ns = big_endian::load_be64(p + 8);
  // Bytes written take time; no time without bytes (a side that did not write says 0, 0).
  if ((t.bytes == 0) != (ns == 0) || ns > std::uint64_t{1} << 62) return std::nullopt;
  t.seconds = static_cast<double>(ns) / 1e9;
  return t;
}

}  // namespace bandwidth_wire

namespace {

using namespace bandwidth_wire;

constexpr std::uint64_t write_id = 1, done_send_id = 2, done_recv_id = 3;

rc_config bandwidth_config() {
  rc_config cfg;
  cfg.send_depth = max_writes_in_flight + 1;  // the writes, and the closing message
  cfg.recv_depth = 1;
  cfg.signal_all = true;
  return cfg;
}

/// Throws error(no_device) when the id's device cannot send one message of `size` bytes.
void check_write_size(rdma_cm_id* id, std::uint32_t size) {
  ibv_port_attr attr{};
  check_ret(ibv_query_port(id->verbs, id->port_num, &attr), "ibv_query_port");
  if (size > attr.max_msg_sz)
    throw error(exit_code::no_device, fmt::format("{}-byte writes: {} port {} takes messages of at most {} bytes", size,
                                                  ibv_get_device_name(id->verbs->device), id->port_num, attr.max_msg_sz));
}

/// The rate of the id's port, in Gb/s as the kernel reports it; 0 unknown.
double port_rate(rdma_cm_id* id) {
  try {
    return query_port(id).rate_gbps().value_or(0);
  } catch (const error&) {
    return 0;  // the depth for an unknown rate
  }
}

/// One side's buffers: what it writes from, what the peer writes into,
/// and the closing message each way.
struct buffers {
  registered_buffer source, sink, done_out, done_in;

  // Relaxed ordering, as perftest asks, where the device takes it (an
  // optional access flag: one that does not is given the buffer without):
  // the writes' data may then reach memory in any order over PCIe, which
  // a bandwidth test does not read, and many adapters need it for line rate.
  buffers(ibv_pd* pd, std::uint32_t size, bool writes)
      : sink(pd, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_RELAXED_ORDERING),
        done_out(pd, done_bytes, 0),
        done_in(pd, done_bytes, IBV_ACCESS_LOCAL_WRITE) {
    if (writes) source = registered_buffer(pd, size, IBV_ACCESS_RELAXED_ORDERING);
  }

  void post_done_recv(ibv_qp* qp) {
    ibv_sge sge = done_in.sge(done_bytes);
    ibv_recv_wr wr{};
    wr.wr_id = done_recv_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    post_recv(qp, wr);
  }

  [[nodiscard]] hello advertised(std::uint32_t size) const noexcept {
    hello h;
    h.addr = sink.addr();
    h.rkey = sink.rkey();
    h.size = size;
    return h;
  }
};

/// What a side writes, when it writes.
struct write_job {
  remote_buffer target;
  std::uint32_t size = 0;
  std::uint64_t count = 0;  ///< 0: for `duration`
  std::chrono::milliseconds duration{0};
};

/// Where a side keeps the two directions' figures: its own writes' and
/// the peer's, as each writer measured them.
struct both_ways {
  std::optional<transfer>& mine;
  std::optional<transfer>& theirs;
};

/// After ESTABLISHED, on both sides: writes `job` (if any) with
/// writes_in_flight(size) writes outstanding, then sends its figures and waits
/// for the peer's, each wait within `limit`. A peer that heard ours may
/// disconnect before its ACK of it left: its DISCONNECTED on `channel`
/// says it was taken. Fills `out` as it goes: this side's figures stand
/// when no figures come from the peer, and what its writes did so far
/// when they do not complete in time.
void exchange(rc_endpoint& ep, cm_channel& channel, buffers& b, const std::string& peer,
              const std::optional<write_job>& job, const wait_limit& limit, both_ways out, double rate_gbps) {
  std::uint64_t posted = 0, completed = 0;
  bool writing = job.has_value(), sent_done = false, done_delivered = false, heard_peer = false;
  clock::time_point first{}, last{};
  // The depth for the port's rate and a fabric's round trip, then again
  // for the round trip the first write took, less its time on the wire.
  std::uint32_t depth = job ? writes_in_flight(job->size, rate_gbps) : 0;
  auto resize = [&] {
    if (!job || completed != 1 || !(rate_gbps > 0)) return;
    double took_us = std::chrono::duration<double, std::micro>(last - first).count();
    double wire_us = static_cast<double>(job->size) * 8 / (rate_gbps * 1e3);
    depth = writes_in_flight(job->size, rate_gbps, std::max(took_us - wire_us, 1.0));
  };
  auto post_writes = [&] {
    while (writing && posted - completed < depth) {
      if (posted > 0 && (job->count > 0 ? posted >= job->count : clock::now() - first >= job->duration)) {
        writing = false;
        break;
      }
      if (posted == 0) first = clock::now();
      post_rdma(ep.qp(), IBV_WR_RDMA_WRITE, b.source, job->size, job->target, write_id);
      ++posted;
    }
  };
  post_writes();
  std::array<ibv_wc, 16> wcs{};
  while (!(done_delivered && heard_peer)) {
    if (!writing && completed == posted && !sent_done) {
      transfer mine;
      if (job) {
        mine = {completed * job->size, std::chrono::duration<double>(last - first).count()};
        out.mine = mine;
      }
      auto bytes = encode_done(mine);
      std::memcpy(b.done_out.data(), bytes.data(), bytes.size());
      ibv_sge sge = b.done_out.sge(done_bytes);
      ibv_send_wr wr{};
      wr.wr_id = done_send_id;
      wr.opcode = IBV_WR_SEND;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      post_send(ep.qp(), wr);
      sent_done = true;
    }
    std::size_t n = 0;
    if (sent_done && heard_peer) {
      auto got = wait_unless_peer_left(ep.cq(), wcs, channel, limit.next(), peer);
      if (!got) break;  // the peer left with our figures
      n = *got;
    } else {
      n = ep.cq().wait(wcs, limit.next());
    }
    if (n == 0 && !sent_done && completed > 0) {
      // A link far below its rate: what it wrote so far says how far.
      transfer so_far{completed * job->size, std::chrono::duration<double>(last - first).count()};
      out.mine = so_far;
      throw error(exit_code::timeout,
                  fmt::format("{}: the writes did not complete in time ({} of {} writes of {} bytes in {:.1f} s: {:.3g} "
                              "Gb/s: a link this slow needs a longer wait or smaller writes)",
                              peer, completed, posted, job->size, so_far.seconds, so_far.gbps()));
    }
    if (n == 0)
      throw error(exit_code::timeout, fmt::format("{}: {} in time", peer,
                                                  !sent_done      ? "the writes did not complete"
                                                  : !heard_peer   ? "no figures from the peer"
                                                                  : "the closing message was not taken"));
    for (std::size_t i = 0; i < n; ++i) {
      const auto& wc = wcs[i];
      if (wc.status != IBV_WC_SUCCESS)
        throw wc_error(wc, fmt::format("{}: {}", peer, wc.wr_id == write_id ? "RDMA WRITE" : "closing message"));
      switch (wc.wr_id) {
        case write_id:
          ++completed;
          last = clock::now();
          resize();
          break;
        case done_send_id:
          done_delivered = true;
          break;
        case done_recv_id: {
          auto theirs = wc.byte_len == done_bytes ? decode_done(b.done_in.bytes().first(done_bytes)) : std::nullopt;
          if (!theirs)
            throw error(exit_code::protocol, fmt::format("{}: its closing message ({} bytes) is not a writer's figures",
                                                         peer, wc.byte_len));
          if (theirs->bytes > 0) out.theirs = theirs;
          heard_peer = true;
          break;
        }
        default:
          break;
      }
    }
    post_writes();
  }
}

}  // namespace

void serve_bandwidth(const bandwidth_plan& plan, const pair_bounds& bounds, bandwidth_outcome& out) {
  auto m = await_client(plan.addr, plan.port, RDMA_PS_TCP, bounds, fmt::format("a client on port {}", plan.port));
  // The request carries the meeting's key (await_client saw it), then the plan.
  auto request = private_data_of(m.request);
  auto asked = decode_request(std::span<const std::byte>(request).subspan(bounds.key.size()));
  cm_id id = m.take_client();
  // Named in refusals; in `out` once connected.
  auto peer = peer_name(id.get());
  auto refuse = [&](exit_code code, const std::string& why) {
    rdma_reject(id.get(), nullptr, 0);
    throw error(code, fmt::format("{}: {}", peer, why));
  };
  if (!asked) refuse(exit_code::protocol, "its connection request is not a bandwidth plan");
  if (asked->size > plan.size)
    refuse(exit_code::usage, fmt::format("it asks for {}-byte writes, more than this side's {}", asked->size, plan.size));
  try {
    check_write_size(id.get(), asked->size);
  } catch (const error& e) {
    refuse(e.code(), e.what());
  }
  out.size = asked->size;
  rc_endpoint ep(id.get(), bandwidth_config());
  buffers b(ep.pd(), asked->size, asked->bidirectional);
  b.post_done_recv(ep.qp());
  accept_rc(m.channel, id.get(), ep, m.work.next(), encode_reply(b.advertised(asked->size)));
  out.connect_us = us_since(m.met);
  out.peer = peer;
  std::optional<write_job> job;
  if (asked->bidirectional)
    job = write_job{{asked->addr, asked->rkey, asked->size}, asked->size, asked->count,
                    std::chrono::milliseconds(asked->duration_ms)};
  exchange(ep, m.channel, b, peer, job, m.work, {out.server_to_client, out.client_to_server}, port_rate(id.get()));
  if (!out.client_to_server) throw error(exit_code::protocol, fmt::format("{}: the client wrote nothing", peer));
  rdma_disconnect(id.get());
}

void measure_bandwidth(const bandwidth_plan& plan, const pair_bounds& bounds, bandwidth_outcome& out) {
  if (plan.size < 1 || plan.size > max_write_bytes || plan.count > max_write_count || plan.duration > max_write_time ||
      (plan.count == 0 && plan.duration.count() <= 0))
    throw error(exit_code::usage, "a bandwidth plan out of its limits");
  auto t0 = clock::now();
  struct connected {
    rc_client c;
    std::unique_ptr<buffers> b;  // destroyed before the connection's PD
    std::vector<std::byte> reply;
  };
  auto link = dial_to_meet(bounds, [&](const wait_limit& meeting) {
    connected made{prepare_rc_client({plan.addr, plan.source, plan.port}, bandwidth_config(), meeting), nullptr, {}};
    check_write_size(made.c.id.get(), plan.size);
    made.b = std::make_unique<buffers>(made.c.endpoint->pd(), plan.size, true);
    made.b->post_done_recv(made.c.endpoint->qp());
    hello h = made.b->advertised(plan.size);
    h.bidirectional = plan.bidirectional;
    h.count = plan.count;
    h.duration_ms = static_cast<std::uint32_t>(plan.duration.count());
    auto request = bounds.key;
    auto plan_bytes = encode_request(h);
    request.insert(request.end(), plan_bytes.begin(), plan_bytes.end());
    made.reply = connect_rc(made.c, bounds.answer().next(), request);
    return made;
  });
  auto work = bounds.work_from_now();
  out.connect_us = us_since(t0);
  out.peer = peer_name(link.c.id.get());
  out.size = plan.size;
  auto reply = decode_reply(link.reply);
  if (!reply || reply->size < plan.size)
    throw error(exit_code::protocol, fmt::format("{}: its accept is not a bandwidth reply", out.peer));
  write_job job{{reply->addr, reply->rkey, reply->size}, plan.size, plan.count, plan.duration};
  exchange(*link.c.endpoint, link.c.channel, *link.b, out.peer, job, work, {out.client_to_server, out.server_to_client},
           port_rate(link.c.id.get()));
  if (plan.bidirectional && !out.server_to_client)
    throw error(exit_code::protocol, fmt::format("{}: the server wrote nothing back", out.peer));
  rdma_disconnect(link.c.id.get());
}

}  // namespace fabric
