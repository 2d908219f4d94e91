#pragma once
/// Reliable-connected (RC) endpoints over rdma_cm: the verbs resources of
/// one connection, and the client and server halves of connection setup,
/// every wait bounded by a deadline.

#include "fabric/base/meet.hpp"
#include "fabric/cm/cm.hpp"
#include "fabric/base/handles.hpp"
#include "fabric/base/wait_limit.hpp"
#include "fabric/verbs/verbs.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace fabric {

/// Queue sizes and modes of an RC endpoint.
struct rc_config {
  std::uint32_t send_depth = 16;   ///< send work requests
  std::uint32_t recv_depth = 2;    ///< receive work requests
  std::uint32_t max_inline = 0;    ///< inline data wanted (0: none)
  bool busy_poll = false;          ///< spin on the CQ instead of sleeping
  bool self_created_qp = false;    ///< ibv_create_qp and state changes driven here (rping -q)
  bool signal_all = false;         ///< every send completes on the CQ (sq_sig_all)
};

/// Creates an RC QP on `id` (rdma_create_qp) over a PD and CQs the caller
/// owns, so that many connections can share them. Inline data is dropped
/// when the provider refuses it; `max_inline` (if given) receives what was granted.
cm_qp create_rc_qp(rdma_cm_id* id, ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, const rc_config& cfg,
                   std::uint32_t* max_inline = nullptr);

/// Creates an RC QP before its connection exists (ibv_create_qp) and moves
/// it to INIT on `port` (P_Key index 0, no remote access), so that
/// receives can be posted on it at once. It stays the caller's, off any
/// id: its number goes in the connect or accept parameters (qp_num), and
/// ready_rc_qp takes it to RTS.
verbs_qp create_unattached_rc_qp(ibv_pd* pd, ibv_cq* send_cq, ibv_cq* recv_cq, const rc_config& cfg,
                                 std::uint8_t port);

/// Whether ready_rc_qp moves a QP to INIT again first.
enum class rc_init {
  again,    ///< with the connection's port, P_Key index and remote access, as librdmacm does
  as_made,  ///< no: the QP's INIT state already is the connection's (its port; a RoCE port's
            ///< P_Key index is always 0) and the connection needs no RDMA READ or WRITE from the peer
};

/// Takes `qp`, an RC QP in INIT that is not on `id`, to RTR and RTS with
/// the attributes the CM gives for the connection (rdma_init_qp_attr), as
/// librdmacm does the QP of an id: a server before rdma_accept, a client
/// at RDMA_CM_EVENT_CONNECT_RESPONSE, before rdma_establish (no
/// ESTABLISHED event follows on its side).
void ready_rc_qp(rdma_cm_id* id, ibv_qp* qp, rc_init init);

/// PD, CQ and QP of one connection, on an rdma_cm id the caller owns.
class rc_endpoint {
public:
  rc_endpoint(rdma_cm_id* id, const rc_config& cfg);
  rc_endpoint(const rc_endpoint&) = delete;
  rc_endpoint& operator=(const rc_endpoint&) = delete;

  [[nodiscard]] ibv_pd* pd() const noexcept { return pd_.get(); }
  [[nodiscard]] event_cq& cq() const noexcept { return *cq_; }
  [[nodiscard]] ibv_qp* qp() const noexcept { return own_qp_ ? own_qp_.get() : cm_qp_.get(); }
  [[nodiscard]] const rc_config& config() const noexcept { return cfg_; }
  [[nodiscard]] std::uint32_t max_inline() const noexcept { return max_inline_; }

  /// Connection parameters: one outstanding RDMA READ each way, full retries.
  [[nodiscard]] rdma_conn_param conn_param() const noexcept;

  /// For a self-created QP: walks it to RTS with rdma_init_qp_attr.
  void ready_self_created_qp();

  /// For a self-created QP: moves it to ERR, which flushes outstanding work.
  void fail_self_created_qp() noexcept;

private:
  rdma_cm_id* id_;
  rc_config cfg_;
  std::uint32_t max_inline_ = 0;
  protection_domain pd_;           // destroyed last
  std::unique_ptr<event_cq> cq_;
  verbs_qp own_qp_;                // only with self_created_qp
  cm_qp cm_qp_;                    // destroyed first
};

/// What a client connects to.
struct rc_target {
  std::string addr;                ///< host, IPv4 or IPv6
  std::string source;              ///< local address to bind (may be empty)
  std::uint16_t port = 0;
};

/// A connected (or connecting) client: channel, id and endpoint, torn down
/// in the right order.
struct rc_client {
  cm_channel channel;
  cm_id id;
  std::unique_ptr<rc_endpoint> endpoint;  // destroyed before the id
};

/// Resolves the target (a host name's lookup, the address, then the route,
/// each a wait of `limit`) and creates the endpoint; the caller then
/// registers buffers, posts receives, and calls connect_rc.
rc_client prepare_rc_client(const rc_target& target, const rc_config& cfg, const wait_limit& limit);

/// Connects a prepared client and waits for ESTABLISHED, offering
/// `private_data` (at most 56 bytes) with the request; returns what the
/// server's accept carried (the provider may pad it with zeros).
/// Rejections and unreachable peers throw error(connect_failed), a silent
/// one error(timeout).
std::vector<std::byte> connect_rc(rc_client& c, const deadline& until, std::span<const std::byte> private_data = {});

/// Binds an id to `addr` (empty: any IPv4 address) and `port`, and listens.
cm_id listen_rc(cm_channel& channel, const std::string& addr, std::uint16_t port, int backlog);

/// The same in port space `ps` (RDMA_PS_UDP for a UD service).
cm_id listen_on(cm_channel& channel, const std::string& addr, std::uint16_t port, rdma_port_space ps, int backlog);

/// A server's side of a check's meeting: listening on `port` (of `addr`;
/// empty: every address) in port space `ps` until its client's request
/// came, by bounds.meet (or later, while the client is on its way); the
/// work's waits count from then. Members go in
/// teardown order: the request is acknowledged before the listener's id
/// goes, and the ids before their channel.
struct server_meeting {
  cm_channel channel;
  cm_id listener;
  cm_event request;
  clock::time_point met;   ///< when the request came
  wait_limit work;         ///< bounds.work from then, each wait bounds.each

  /// The client's id, out of its request, which is acknowledged (its
  /// private data is gone then).
  cm_id take_client();
};

/// Listens and waits for the client of a check, whose request carries
/// bounds.key (next_request); the meeting's channel refuses any other
/// request from then on, a stranger's, until the pair is over. Throws
/// error(timeout) naming `who` ("a
/// client on port 18515") when none came by bounds.meet and the client is
/// not on its way (pair_bounds::peer_on_its_way), and peer_gone_error
/// once the client is known to be gone (pair_bounds::peer_gone).
server_meeting await_client(const std::string& addr, std::uint16_t port, rdma_port_space ps, const pair_bounds& bounds,
                            std::string_view who);

/// The next connection request on a meeting's `channel` by `until` (one
/// whose private data starts with the pair's key: the channel refuses a
/// stranger's, cm_channel::refuse_strangers). nullopt when none came in
/// time; any other event is an error of `who`.
std::optional<cm_event> next_request(cm_channel& channel, const deadline& until, std::string_view who);
/// next_request for a request that must come: throws error(timeout)
/// naming `who` when none came by `until`.
cm_event expect_request(cm_channel& channel, const deadline& until, std::string_view who);

/// Binds a new id of port space `ps` to a resolved local address (port
/// included) and listens; `backlog` 0 takes the kernel's default.
cm_id listen_at(cm_channel& channel, const sockaddr* local, rdma_port_space ps, int backlog);

/// Answers a connection request on `id` (whose endpoint is ready and has
/// receives posted) with an accept carrying `private_data` (at most 196
/// bytes), without waiting for what follows.
void send_accept(rdma_cm_id* id, rc_endpoint& ep, std::span<const std::byte> private_data = {});

/// send_accept, then waits on `channel` for ESTABLISHED.
void accept_rc(cm_channel& channel, rdma_cm_id* id, rc_endpoint& ep, const deadline& until,
               std::span<const std::byte> private_data = {});

/// A wait for the completions of a connection's last sends, which need
/// the peer's ACK: a peer that had everything may disconnect before its
/// ACK left, and then they never come. Returns completions (at least one)
/// or 0 when `until` passed, as event_cq::wait; nullopt when the peer's
/// DISCONNECTED came instead, which says it had everything. Any other
/// event on `channel` (but a stranger's request, refused there) is an
/// error of `peer`.
std::optional<std::size_t> wait_unless_peer_left(event_cq& cq, std::span<ibv_wc> out, cm_channel& channel,
                                                 const deadline& until, std::string_view peer);


}  // namespace fabric
