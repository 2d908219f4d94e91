#pragma once
/// The verbs resources every connection shares, per device: one PD, one
/// memory region per direction and CQs handed out in slices, so that
/// setting up a connection costs a QP and nothing else; and the QPs made
/// ahead of need on a helper thread (made_ahead.hpp), so that the thread
/// handling CM events only picks them up. Owns all of it; the QPs a
/// connection took are the connection table's.

#include "made_ahead.hpp"
#include "options.hpp"

#include "fabric/base/handles.hpp"
#include "fabric/cm/rc.hpp"
#include "fabric/verbs/verbs.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace ucmatose {

/// The resources of one device, shared by every connection on it.
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

/// A QP made for a connection (in INIT, its receives posted), with what
/// making it took: the connection's create_qp step.
struct prepared_qp {
  fabric::verbs_qp qp;
  device_resources* dev = nullptr;
  double create_us = 0;
  /// Whether its INIT state already is the connection's (see fabric::rc_init):
  /// ucmatose only sends, so only the port and its P_Key index count.
  fabric::rc_init init = fabric::rc_init::again;
};

/// Every device's shared resources, and the QP helper.
class device_pool {
public:
  /// `o` must outlive the pool; `o.timed()` says whether making a QP is timed.
  explicit device_pool(const options& o);
  device_pool(const device_pool&) = delete;
  device_pool& operator=(const device_pool&) = delete;
  ~device_pool();

  /// The resources of device `verbs`, made on first use.
  device_resources& device_for(ibv_context* verbs);

  /// Starts making every connection's QP ahead on `verbs`, the first time
  /// it is called. If that fails, each connection makes its own QP and
  /// meets the error there, at its own step.
  void start_helper(ibv_context* verbs, std::uint8_t port);

  /// Makes, on the calling thread beside the helper, every QP the helper
  /// has not made yet; returns once all are made. Throws on Ctrl-C, which
  /// it checks between QPs. Nothing to make without a helper.
  void make_all_now();

  /// Connection i's QP, for its id: the one made ahead when the id is on
  /// the helper's device, else one made here and now. Not on the id: the
  /// connection takes it to RTS (fabric::ready_rc_qp).
  prepared_qp take_qp(std::size_t i, rdma_cm_id* id);

  /// Polls every CQ, handing each completion to `on`; true when any came.
  bool poll(const std::function<void(const ibv_wc&)>& on);
  /// Appends the descriptors that become readable on completions, one per device.
  void add_fds(std::vector<int>& fds) const;
  /// Device k's descriptor was readable: takes its events, re-arms its CQs.
  void consume(std::size_t k);

  /// Stops the helper (destroying the QPs nobody took), then destroys
  /// every device's resources. Call once every connection's QP is gone.
  void clear();

private:
  [[nodiscard]] fabric::rc_config qp_config() const;
  ibv_cq* slice_cq(device_resources& dev, int entries);
  void make_helper(ibv_context* verbs, std::uint8_t port);
  /// Safe on the helper's thread: nothing shared is written.
  prepared_qp make_qp(device_resources& dev, ibv_cq* send_cq, ibv_cq* recv_cq, std::uint8_t port,
                      std::size_t i) const;

  const options& o_;
  std::uint32_t count_;                    // messages each way per connection
  int max_cqe_ = 0;
  std::vector<std::unique_ptr<device_resources>> devices_;
  ibv_context* helper_device_ = nullptr;
  std::uint8_t helper_port_ = 0;
  bool helper_on_roce_ = false;            // the helper's port is RoCE: its P_Key index is always 0
  bool helper_tried_ = false;
  std::unique_ptr<made_ahead<prepared_qp>> helper_;  // last: stopped before the devices go
};

}  // namespace ucmatose
