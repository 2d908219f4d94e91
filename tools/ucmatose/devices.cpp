// Per-device resources and the QPs made ahead.
#include "devices.hpp"

#include "messages.hpp"
#include "payload.hpp"

#include "fabric/base/error.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

namespace ucmatose {

using fabric::error;
using fabric::exit_code;

device_pool::device_pool(const options& o) : o_(o), count_(static_cast<std::uint32_t>(o.messages())) {}

device_pool::~device_pool() { clear(); }

device_resources& device_pool::device_for(ibv_context* verbs) {
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

ibv_cq* device_pool::slice_cq(device_resources& dev, int entries) {
  if (entries > max_cqe_)
    throw error(exit_code::no_device,
                fmt::format("-C {} needs {} CQ entries; the device allows {}", o_.count, entries, max_cqe_));
  if (!dev.current || dev.left_in_current < entries) {
    dev.current = dev.cqs->add(std::max(dev.cq_depth, entries));
    dev.all_cqs.push_back(dev.current);
    dev.left_in_current = std::max(dev.cq_depth, entries);
  }
  dev.left_in_current -= entries;
  return dev.current;
}

fabric::rc_config device_pool::qp_config() const {
  fabric::rc_config cfg;
  cfg.send_depth = std::max<std::uint32_t>(count_, 1);
  cfg.recv_depth = cfg.send_depth;
  cfg.signal_all = true;
  return cfg;
}

void device_pool::start_helper(ibv_context* verbs, std::uint8_t port) {
  if (std::exchange(helper_tried_, true)) return;
  try {
    make_helper(verbs, port);
  } catch (const error& e) {
    if (e.ends_run()) throw;
  }
}

void device_pool::make_helper(ibv_context* verbs, std::uint8_t port) {
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
  ibv_port_attr port_attr{};
  helper_on_roce_ = ibv_query_port(verbs, port, &port_attr) == 0 && port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
  helper_device_ = verbs;
  helper_port_ = port;
  helper_ = std::make_unique<made_ahead<prepared_qp>>(n, [this, &dev, port, cqs = std::move(cqs)](std::size_t k) {
    return make_qp(dev, cqs[k].first, cqs[k].second, port, k);
  });
}

prepared_qp device_pool::make_qp(device_resources& dev, ibv_cq* send_cq, ibv_cq* recv_cq, std::uint8_t port,
                                 std::size_t i) const {
  auto t = o_.timed() ? fabric::clock::now() : fabric::clock::time_point{};
  prepared_qp p;
  p.dev = &dev;
  p.qp = fabric::create_unattached_rc_qp(dev.pd.get(), send_cq, recv_cq, qp_config(), port);
  post_recvs(p.qp.get(), i, dev.recv_buf, o_);
  if (o_.timed()) p.create_us = fabric::us_since(t);
  return p;
}

void device_pool::make_all_now() {
  if (helper_) helper_->make_all([] { return fabric::interrupted(); });
  fabric::throw_if_interrupted();
}

prepared_qp device_pool::take_qp(std::size_t i, rdma_cm_id* id) {
  if (helper_ && helper_device_ == id->verbs) {
    prepared_qp p = helper_->take(i);
    if (helper_on_roce_ && id->port_num == helper_port_) p.init = fabric::rc_init::as_made;
    return p;
  }
  // Made here and now: no helper, or the connection came in on another device.
  auto& dev = device_for(id->verbs);
  auto depth = static_cast<int>(qp_config().send_depth);
  ibv_cq* send_cq = slice_cq(dev, depth);
  ibv_cq* recv_cq = slice_cq(dev, depth);
  return make_qp(dev, send_cq, recv_cq, id->port_num, i);
}

bool device_pool::poll(const std::function<void(const ibv_wc&)>& on) {
  std::array<ibv_wc, 32> wcs{};
  bool any = false;
  for (auto& d : devices_)
    for (ibv_cq* cq : d->all_cqs)
      for (int n; (n = ibv_poll_cq(cq, static_cast<int>(wcs.size()), wcs.data())) != 0;) {
        if (n < 0) fabric::throw_errno(-n, "ibv_poll_cq");
        any = true;
        for (int k = 0; k < n; ++k) on(wcs[static_cast<std::size_t>(k)]);
      }
  return any;
}

void device_pool::add_fds(std::vector<int>& fds) const {
  for (const auto& d : devices_) fds.push_back(d->cqs->fd());
}

void device_pool::consume(std::size_t k) { devices_[k]->cqs->consume_events(); }

void device_pool::clear() {
  helper_.reset();
  devices_.clear();
}

}  // namespace ucmatose
