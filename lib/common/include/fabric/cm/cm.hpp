#pragma once
/// rdma_cm connection management with bounded waits.

#include "fabric/base/error.hpp"
#include "fabric/base/handles.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/base/wait_limit.hpp"
#include "fabric/verbs/ports.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabric {

/// One rdma_cm event; acknowledged when destroyed.
class cm_event {
public:
  cm_event() = default;
  explicit cm_event(rdma_cm_event* ev) noexcept : ev_(ev) {}
  cm_event(cm_event&& o) noexcept : ev_(std::exchange(o.ev_, nullptr)) {}
  cm_event& operator=(cm_event&& o) noexcept;
  ~cm_event() { reset(); }

  void reset() noexcept;
  explicit operator bool() const noexcept { return ev_ != nullptr; }
  [[nodiscard]] rdma_cm_event* get() const noexcept { return ev_; }
  [[nodiscard]] rdma_cm_event_type type() const noexcept { return ev_->event; }
  [[nodiscard]] rdma_cm_id* id() const noexcept { return ev_->id; }
  [[nodiscard]] rdma_cm_id* listen_id() const noexcept { return ev_->listen_id; }
  [[nodiscard]] int status() const noexcept { return ev_->status; }
  [[nodiscard]] const rdma_conn_param& conn() const noexcept { return ev_->param.conn; }
  [[nodiscard]] const rdma_ud_param& ud() const noexcept { return ev_->param.ud; }
  /// "RDMA_CM_EVENT_ESTABLISHED", ...
  [[nodiscard]] std::string_view name() const noexcept;

private:
  rdma_cm_event* ev_ = nullptr;
};

/// The exit code an unexpected CM event maps to (ADDR_ERROR -> resolve_failed, ...).
exit_code classify_event(rdma_cm_event_type type) noexcept;

/// Text of a CM event type ("RDMA_CM_EVENT_REJECTED").
std::string_view event_name(rdma_cm_event_type type) noexcept;

/// An error describing an unexpected or failed event: "what: RDMA_CM_EVENT_REJECTED (status 28)".
error event_error(const cm_event& ev, std::string_view what);

/// An event channel whose reads never block past a deadline.
class cm_channel {
public:
  /// Creates the channel; throws error(no_device) when no RDMA device exists.
  cm_channel();

  [[nodiscard]] rdma_event_channel* get() const noexcept { return ch_.get(); }
  [[nodiscard]] int fd() const noexcept { return ch_->fd; }

  /// Creates an id on this channel.
  cm_id create_id(rdma_port_space ps, void* context = nullptr);

  /// The next event, or nullopt when the deadline passes first.
  std::optional<cm_event> next(const deadline& until);

  /// The next event if one is queued; never waits.
  std::optional<cm_event> try_next();

  /// The next event, which must be `expected` on any id; any other event
  /// or a timeout throws an error naming `what`.
  cm_event expect(rdma_cm_event_type expected, const deadline& until, std::string_view what);
  /// The same for an event that may be any of `expected`.
  cm_event expect_one_of(std::initializer_list<rdma_cm_event_type> expected, const deadline& until, std::string_view what);

  /// Hands every event to `handle` until it has returned true `n` times
  /// (one per id that reached its end, ready or failed). False when no
  /// event came for `quiet` first.
  bool settle(std::size_t n, std::chrono::milliseconds quiet, const std::function<bool(cm_event&)>& handle);

  /// Moves an id to this channel (rdma_migrate_id).
  void adopt(rdma_cm_id* id);

  /// From now on, a connection request to `listener` whose private data
  /// does not start with `key` (a stranger dialling a check's port) is
  /// refused as it comes: next() and try_next() never return one, and it
  /// moves no wait's end.
  void refuse_strangers(const rdma_cm_id* listener, std::span<const std::byte> key);

private:
  /// Whether `ev` is a stranger's request to the guarded listener: then
  /// it is refused.
  bool refused(cm_event& ev);

  event_channel ch_;
  const rdma_cm_id* guarded_ = nullptr;
  std::vector<std::byte> key_;
};

/// The private data a connection event carries (empty when none).
std::vector<std::byte> private_data_of(const cm_event& ev);

/// cm_channel::settle over ids whose contexts point at `Item`s:
/// `on_event(item, ev)` returns true once that item reached its end (ready
/// or failed); an error it throws ends that item alone, through
/// `on_error(item, e)`. False when no event came for `quiet` first.
template <class Item, class OnEvent, class OnError>
bool settle_each(cm_channel& ch, std::size_t n, std::chrono::milliseconds quiet, OnEvent on_event,
                 OnError on_error) {
  return ch.settle(n, quiet, [&](cm_event& ev) {
    auto& item = *static_cast<Item*>(ev.id()->context);
    try {
      return on_event(item, ev);
    } catch (const error& e) {
      on_error(item, e);
      return true;
    }
  });
}

/// The device every id is bound to when the host has exactly one RDMA
/// device (librdmacm's context for it); nullptr when it has several.
ibv_context* sole_device();

/// This host's RDMA at its own address.
struct own_rdma {
  /// What surely keeps the host from it: no RDMA device at all, none that
  /// has the address (a literal one: a name may look up differently here
  /// than on the peers), or the port that has it not Active; empty when
  /// none of these is so.
  std::string trouble;
  std::optional<port_info> port;  ///< the port that has the address
};
/// own_rdma at `address`; an error that says nothing sure (the name's
/// lookup failed, or gave an address no RDMA device has) is thrown.
own_rdma own_rdma_at(const std::string& address, std::chrono::milliseconds lookup_timeout);

/// "10.0.0.1:51234": the peer of a connected id (RC or UD), or of a
/// connection request.
std::string peer_name(rdma_cm_id* id);

/// How long one rdma_resolve_addr or rdma_resolve_route may take in the
/// kernel. The kernel looks again at a neighbour it is resolving only when
/// told the neighbour changed, or when this time is up: a resolution whose
/// news it missed waits that long. So a wait longer than this is made of
/// several tries, each this long, not of one.
inline constexpr std::chrono::milliseconds resolve_try{2000};

/// The milliseconds of one try of a resolution whose wait ends at
/// `until`: resolve_try, or what is left when that is less (at least 1).
int resolve_try_ms(const deadline& until);
/// The same for the first try of a wait of `limit` that starts now: reads
/// no clock unless `limit` also has an end of its own (wait_limit::by).
int resolve_try_ms(const wait_limit& limit);

/// Whether `ev` is the end of a try (ADDR_ERROR or ROUTE_ERROR, ETIMEDOUT)
/// of a resolution whose wait, ending at `until`, has time for another:
/// for event loops that drive many resolutions at once, as
/// resolve_addr_route does one.
bool retry_resolution(const cm_event& ev, const deadline& until);

/// Resolves address then route of a client id, waiting for both events,
/// each a wait of `limit`: a try the kernel ends ETIMEDOUT (resolve_try)
/// is tried again while the wait has time left.
void resolve_addr_route(cm_channel& ch, rdma_cm_id* id, sockaddr* src, sockaddr* dst, const wait_limit& limit);

/// The address alone, the same way (a multicast group has no route).
void resolve_addr(cm_channel& ch, rdma_cm_id* id, sockaddr* src, sockaddr* dst, const wait_limit& limit);

/// Answers the requests queued on a UD server's channel that repeat one it
/// accepted: a client whose SIDR reply was lost on the way asks again (its
/// kernel sends the request once more, every 4 s). `qp_of(request)` names
/// the QP that answered the first (as the first answer did), or nullopt
/// for a request that repeats none, which is refused. Answered ids are
/// kept in `answered`; other events are not the server's to act on.
void answer_repeated_requests(cm_channel& channel,
                              const std::function<std::optional<std::uint32_t>(const cm_event&)>& qp_of,
                              std::vector<cm_id>& answered);

}  // namespace fabric
