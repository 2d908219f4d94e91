#pragma once
// A bare UD QP of the test peers that sends datagrams from a GID of its
// own choosing, as a stranger on the wire would: to a QP it names, with
// rdma_cm's UDP Q_Key, a few or a flood of them.
#include "fabric/base/handles.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/verbs/verbs.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

namespace peers {

inline constexpr std::uint32_t udp_qkey = 0x01234567;  // RDMA_UDP_QKEY

/// The RoCE GID of an IPv4 address.
inline ibv_gid roce_gid(const char* addr) {
  ibv_gid g{};
  g.raw[10] = g.raw[11] = 0xff;
  if (inet_pton(AF_INET, addr, g.raw + 12) != 1) throw std::runtime_error(fmt::format("{}: not IPv4", addr));
  return g;
}

/// A UD QP that sends from the GID of `from` (an IPv4 address of this host).
class stranger {
public:
  stranger(ibv_context* ctx, const char* from, std::uint32_t size) : size_(size) {
    ibv_gid want = roce_gid(from);
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
    post(ah.get(), std::span(&qpn, 1), n);
  }

  /// Sends datagrams to `qpn` at `dgid` one batch after another until
  /// `until`; returns how many.
  std::uint64_t flood(const ibv_gid& dgid, std::uint32_t qpn, const fabric::deadline& until) {
    return spray(dgid, std::vector{qpn}, until);
  }

  /// The same to each QP of `qpns` in turn.
  std::uint64_t spray(const ibv_gid& dgid, const std::vector<std::uint32_t>& qpns, const fabric::deadline& until) {
    fabric::address_handle ah = ah_to(dgid);
    std::uint64_t sent = 0;
    // The clock only now and then: reading it costs as much as a batch.
    for (std::uint64_t k = 0; k % 64 != 0 || !until.expired(); ++k, sent += 8) post(ah.get(), qpns, 8);
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

  /// Posts `n` sends (at most the queue's 8) in one call, to the QPs of
  /// `qpns` in turn, and waits for their completions.
  void post(ibv_ah* ah, std::span<const std::uint32_t> qpns, int n) {
    std::array<ibv_sge, 8> sges{};
    std::array<ibv_send_wr, 8> wrs{};
    for (int done = 0; done < n;) {
      int batch = std::min(n - done, 8);
      for (int i = 0; i < batch; ++i) {
        sges[i] = buf_.sge(size_);
        auto& wr = wrs[i];
        wr = {};
        wr.opcode = IBV_WR_SEND_WITH_IMM;
        wr.imm_data = htobe32(qp_->qp_num);
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.sg_list = &sges[i];
        wr.num_sge = 1;
        wr.wr.ud.ah = ah;
        wr.wr.ud.remote_qpn = qpns[static_cast<std::size_t>(done + i) % qpns.size()];
        wr.wr.ud.remote_qkey = udp_qkey;
        wr.next = i + 1 < batch ? &wrs[i + 1] : nullptr;
      }
      ibv_send_wr* bad = nullptr;
      if (ibv_post_send(qp_.get(), wrs.data(), &bad) != 0) throw std::runtime_error("ibv_post_send failed");
      for (int completed = 0; completed < batch;) {
        std::array<ibv_wc, 8> wc{};
        int got = ibv_poll_cq(cq_.get(), 8, wc.data());
        if (got < 0) throw std::runtime_error("ibv_poll_cq failed");
        completed += got;
      }
      done += batch;
    }
  }

  std::uint32_t size_;
  int sgid_index_ = -1;
  fabric::protection_domain pd_;
  fabric::completion_queue cq_;
  fabric::registered_buffer buf_;
  fabric::verbs_qp qp_;  // destroyed first
};


}  // namespace peers
