#include "fabric/verbs/verbs.hpp"

#include <fmt/format.h>

namespace fabric {

event_cq::event_cq(ibv_context* verbs, int depth, bool busy_poll) : busy_poll_(busy_poll) {
  channel_.reset(check_ptr(ibv_create_comp_channel(verbs), "ibv_create_comp_channel"));
  set_nonblocking(channel_->fd);
  cq_.reset(check_ptr(ibv_create_cq(verbs, depth, this, channel_.get(), 0), "ibv_create_cq"));
  if (!busy_poll_) rearm();
}

event_cq::~event_cq() {
  if (cq_ && unacked_ > 0) ibv_ack_cq_events(cq_.get(), unacked_);
}

void event_cq::rearm() { check_ret(ibv_req_notify_cq(cq_.get(), 0), "ibv_req_notify_cq"); }

std::size_t event_cq::poll(std::span<ibv_wc> out) {
  int n = ibv_poll_cq(cq_.get(), static_cast<int>(out.size()), out.data());
  if (n < 0) throw_errno(-n, "ibv_poll_cq");
  return static_cast<std::size_t>(n);
}

std::size_t event_cq::spin(std::span<ibv_wc> out) {
  // The next completion is often only microseconds away: looking for it
  // that long costs less than sleeping on the channel, which takes a few
  // system calls and a wakeup per completion. The first polls read no
  // clock; only a longer look is timed.
  constexpr unsigned free_polls = 64;
  constexpr auto budget = std::chrono::microseconds(100);
  for (unsigned spins = 0; spins < free_polls; ++spins)
    if (auto n = poll(out)) return n;
  auto stop = clock::now() + budget;
  for (unsigned spins = 1;; ++spins) {
    if (auto n = poll(out)) return n;
    if ((spins & 0x3f) == 0 && clock::now() >= stop) return 0;
  }
}

std::size_t event_cq::wait(std::span<ibv_wc> out, const deadline& until) { return wait_or(out, -1, until); }

std::size_t event_cq::wait_or(std::span<ibv_wc> out, int watch_fd, const deadline& until) {
  lazy_deadline started(until);
  return wait_or(out, watch_fd, started);
}

std::size_t event_cq::wait_or(std::span<ibv_wc> out, int watch_fd, lazy_deadline& until) {
  if (busy_poll_) {
    for (unsigned spins = 1;; ++spins) {
      if (auto n = poll(out)) return n;
      // Signals, the clock and the watched fd cost more than a poll: look
      // now and then, the deadline first started after as many polls.
      if ((spins & 0x3fff) == 0) {
        throw_if_interrupted();
        if (until.expired()) return 0;
        if (watch_fd >= 0 && wait_any(std::span(&watch_fd, 1), std::chrono::milliseconds(0)) == 0) return 0;
      }
    }
  }
  const int fds[2] = {channel_->fd, watch_fd};
  for (;;) {
    if (auto n = spin(out)) return n;
    int ready = wait_any(fds, until.get());
    if (ready != 0) return poll(out);  // timeout, or the watched fd
    ibv_cq* ev_cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(channel_.get(), &ev_cq, &ctx) == 0) {
      // Acknowledging in batches avoids a mutex round trip per event.
      if (++unacked_ >= 64) {
        ibv_ack_cq_events(cq_.get(), unacked_);
        unacked_ = 0;
      }
      rearm();
    }
  }
}

cq_group::cq_group(ibv_context* verbs) : verbs_(verbs) {
  channel_.reset(check_ptr(ibv_create_comp_channel(verbs), "ibv_create_comp_channel"));
  set_nonblocking(channel_->fd);
}

cq_group::~cq_group() {
  for (auto& s : cqs_)
    if (s->unacked > 0) ibv_ack_cq_events(s->cq.get(), s->unacked);
}

ibv_cq* cq_group::add(int depth) {
  auto s = std::make_unique<slot>();
  s->cq.reset(check_ptr(ibv_create_cq(verbs_, depth, s.get(), channel_.get(), 0), "ibv_create_cq"));
  check_ret(ibv_req_notify_cq(s->cq.get(), 0), "ibv_req_notify_cq");
  cqs_.push_back(std::move(s));
  return cqs_.back()->cq.get();
}

void cq_group::consume_events() {
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  while (ibv_get_cq_event(channel_.get(), &cq, &ctx) == 0) {
    auto* s = static_cast<slot*>(ctx);
    if (++s->unacked >= 64) {
      ibv_ack_cq_events(cq, s->unacked);
      s->unacked = 0;
    }
    check_ret(ibv_req_notify_cq(cq, 0), "ibv_req_notify_cq");
  }
}

std::string_view wc_status_name(ibv_wc_status status) noexcept { return ibv_wc_status_str(status); }

error wc_error(const ibv_wc& wc, std::string_view what) {
  exit_code code = exit_code::connect_failed;
  switch (wc.status) {
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_LOC_PROT_ERR:
      code = exit_code::protocol;
      break;
    default:
      break;
  }
  return error(code, fmt::format("{}: {} (status {}, wr_id {})", what, wc_status_name(wc.status),
                                 static_cast<int>(wc.status), wc.wr_id));
}

registered_buffer::registered_buffer(ibv_pd* pd, std::size_t size, int access)
    : data_(new std::byte[size == 0 ? 1 : size]()), size_(size) {
  mr_.reset(check_ptr(ibv_reg_mr(pd, data_.get(), size == 0 ? 1 : size, access),
                      fmt::format("ibv_reg_mr {} bytes", size)));
}

protection_domain alloc_pd(ibv_context* verbs) {
  return protection_domain(check_ptr(ibv_alloc_pd(verbs), "ibv_alloc_pd"));
}

void post_send(ibv_qp* qp, ibv_send_wr& wr) {
  ibv_send_wr* bad = nullptr;
  check_ret(ibv_post_send(qp, &wr, &bad), "ibv_post_send");
}

ibv_send_wr rdma_wr(ibv_wr_opcode op, ibv_sge& sge, const remote_buffer& remote, std::uint64_t wr_id,
                    bool signaled) noexcept {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.opcode = op;
  wr.send_flags = signaled ? IBV_SEND_SIGNALED : 0;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = remote.addr;
  wr.wr.rdma.rkey = remote.rkey;
  return wr;
}

void post_rdma(ibv_qp* qp, ibv_wr_opcode op, const registered_buffer& local, std::uint32_t length,
               const remote_buffer& remote, std::uint64_t wr_id, bool signaled) {
  ibv_sge sge = local.sge(length);
  ibv_send_wr wr = rdma_wr(op, sge, remote, wr_id, signaled);
  post_send(qp, wr);
}

void post_recv(ibv_qp* qp, ibv_recv_wr& wr) {
  ibv_recv_wr* bad = nullptr;
  check_ret(ibv_post_recv(qp, &wr, &bad), "ibv_post_recv");
}

}  // namespace fabric
