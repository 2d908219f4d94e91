// A udaddy client with a stranger beside it, for the UD tests. It connects
// to a udaddy server as udaddy does (SIDR), and before it sends a word, a
// second QP from another GID of this host (the address FROM, which must be
// on a local interface) sends datagrams of STRANGER_SIZE bytes (default:
// SIZE) to the server's QP with rdma_cm's UDP Q_Key. Then the client sends
// COUNT messages of SIZE bytes (default 100, udaddy's -S) and waits for
// the server's COUNT replies: a server that took the stranger for its
// client answers the stranger instead, and one whose receives cannot hold
// the stranger's datagrams has lost its QP. With FLOOD_MS, the client
// sends only half of its COUNT messages, and the stranger then floods the
// server for FLOOD_MS without a pause: a server whose wait took strangers'
// datagrams for its client's progress would wait as long as the flood.
//   ud_stranger FROM SERVER COUNT [SIZE [STRANGER_SIZE [FLOOD_MS]]]
// Exits 0 when every reply came back (with FLOOD_MS: once the flood is
// over), 1 when not, 2 on bad use.
#include "fabric/verbs/addr.hpp"
#include "fabric/cm/cm.hpp"
#include "fabric/base/handles.hpp"
#include "fabric/base/idle_deadline.hpp"
#include "fabric/cm/ud.hpp"
#include "fabric/flows/ud_traffic.hpp"
#include "fabric/verbs/verbs.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace {

constexpr std::uint32_t udp_qkey = 0x01234567;  // RDMA_UDP_QKEY
constexpr int stranger_messages = 5;

/// A bare UD QP that sends from the GID of `from`.
class stranger {
public:
  stranger(ibv_context* ctx, const char* from, std::uint32_t size) : size_(size) {
    ibv_gid want{};
    want.raw[10] = want.raw[11] = 0xff;
    if (inet_pton(AF_INET, from, want.raw + 12) != 1) throw std::runtime_error(fmt::format("{}: not IPv4", from));
    ibv_port_attr port{};
    ibv_query_port(ctx, 1, &port);
    for (int i = 0; i < port.gid_tbl_len && sgid_index_ < 0; ++i) {
      ibv_gid g{};
      if (ibv_query_gid(ctx, 1, i, &g) == 0 && std::memcmp(g.raw, want.raw, 16) == 0) sgid_index_ = i;
    }
    if (sgid_index_ < 0) throw std::runtime_error(fmt::format("no GID for {} on port 1", from));
    pd_.reset(ibv_alloc_pd(ctx));
    cq_.reset(ibv_create_cq(ctx, 16, nullptr, nullptr, 0));
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq_.get();
    init.qp_type = IBV_QPT_UD;
    init.cap.max_send_wr = init.cap.max_recv_wr = 8;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    qp_.reset(ibv_create_qp(pd_.get(), &init));
    if (!qp_) throw std::runtime_error("ibv_create_qp failed");
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qkey = udp_qkey;
    ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    a.qp_state = IBV_QPS_RTR;
    ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE);
    a.qp_state = IBV_QPS_RTS;
    if (ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) throw std::runtime_error("QP to RTS failed");
    buf_ = fabric::registered_buffer(pd_.get(), std::max<std::uint32_t>(size, 1), IBV_ACCESS_LOCAL_WRITE);
  }

  /// Sends `n` datagrams to `qpn` at `dgid` and waits for their completions.
  void send(const ibv_gid& dgid, std::uint32_t qpn, int n) {
    fabric::address_handle ah = ah_to(dgid);
    post(ah.get(), qpn, n);
  }

  /// Sends datagrams to `qpn` at `dgid` one batch after another until
  /// `until`; returns how many.
  std::uint64_t flood(const ibv_gid& dgid, std::uint32_t qpn, const fabric::deadline& until) {
    fabric::address_handle ah = ah_to(dgid);
    std::uint64_t sent = 0;
    for (; !until.expired(); sent += 8) post(ah.get(), qpn, 8);
    return sent;
  }

private:
  fabric::address_handle ah_to(const ibv_gid& dgid) {
    ibv_ah_attr attr{};
    attr.is_global = 1;
    attr.grh.dgid = dgid;
    attr.grh.sgid_index = static_cast<std::uint8_t>(sgid_index_);
    attr.grh.hop_limit = 64;
    attr.port_num = 1;
    fabric::address_handle ah(ibv_create_ah(pd_.get(), &attr));
    if (!ah) throw std::runtime_error("ibv_create_ah failed");
    return ah;
  }

  void post(ibv_ah* ah, std::uint32_t qpn, int n) {
    for (int i = 0; i < n; ++i) {
      ibv_sge sge = buf_.sge(size_);
      ibv_send_wr wr{}, *bad = nullptr;
      wr.opcode = IBV_WR_SEND_WITH_IMM;
      wr.imm_data = htobe32(qp_->qp_num);
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.wr.ud.ah = ah;
      wr.wr.ud.remote_qpn = qpn;
      wr.wr.ud.remote_qkey = udp_qkey;
      if (ibv_post_send(qp_.get(), &wr, &bad) != 0) throw std::runtime_error("ibv_post_send failed");
    }
    for (int done = 0; done < n;) {
      ibv_wc wc[8];
      int got = ibv_poll_cq(cq_.get(), 8, wc);
      if (got < 0) throw std::runtime_error("ibv_poll_cq failed");
      done += got;
    }
  }

  std::uint32_t size_;
  int sgid_index_ = -1;
  fabric::protection_domain pd_;
  fabric::completion_queue cq_;
  fabric::registered_buffer buf_;
  fabric::verbs_qp qp_;  // destroyed first
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 4 || argc > 7) {
    fmt::print(stderr, "usage: ud_stranger FROM SERVER COUNT [SIZE [STRANGER_SIZE [FLOOD_MS]]]\n");
    return 2;
  }
  std::uint64_t count = std::stoul(argv[3]);
  auto size = static_cast<std::uint32_t>(argc > 4 ? std::stoul(argv[4]) : 100);
  auto stranger_size = static_cast<std::uint32_t>(argc > 5 ? std::stoul(argv[5]) : size);
  std::optional<std::chrono::milliseconds> flood;
  if (argc > 6) flood = std::chrono::milliseconds(std::stoul(argv[6]));
  auto until = fabric::deadline::after(std::chrono::seconds(10));

  fabric::cm_channel ch;
  fabric::addr_query q;
  q.node = argv[2];
  q.service = "7174";
  q.port_space = RDMA_PS_UDP;
  q.qp_type = IBV_QPT_UD;
  auto addrs = fabric::resolve_pair(q, "");
  fabric::cm_id id = ch.create_id(RDMA_PS_UDP);
  fabric::resolve_addr_route(ch, id.get(), addrs.src_addr(), addrs.dst_addr(), fabric::wait_limit::by(until));
  stranger other(id->verbs, argv[1], stranger_size);

  fabric::ud_config cfg;
  cfg.size = size;
  cfg.send_depth = cfg.recv_depth = static_cast<std::uint32_t>(count);
  fabric::ud_endpoint ep(id.get(), cfg);
  fabric::ud_traffic traffic(ep, count, false, "client");
  traffic.post_receives();
  rdma_conn_param param{};
  fabric::check_rc(rdma_connect(id.get(), &param), "rdma_connect");
  auto ev = ch.expect(RDMA_CM_EVENT_ESTABLISHED, until, "SIDR reply");
  fabric::ud_destination server{ep.create_ah(ev.ud().ah_attr), ev.ud().qp_num, ev.ud().qkey};
  ibv_gid server_gid = ev.ud().ah_attr.grh.dgid;
  ev.reset();

  other.send(server_gid, server.qpn, stranger_messages);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  fabric::idle_deadline idle(std::chrono::milliseconds(3000));
  auto sending = flood ? count / 2 : count;
  traffic.send(server, sending, idle);
  traffic.finish_sends(idle);
  if (flood) {
    auto n = other.flood(server_gid, server.qpn, fabric::deadline::after(*flood));
    fmt::print("flooded the server with {} datagrams\n", n);
    return 0;
  }
  traffic.receive_all(idle);
  fmt::print("replies {} of {}\n", traffic.received(), count);
  return traffic.received() == count ? 0 : 1;
} catch (const std::exception& e) {
  fmt::print(stderr, "ud_stranger: {}\n", e.what());
  return 1;
}
