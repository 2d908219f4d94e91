#include "fabric/cm/cm.hpp"

#include "fabric/verbs/addr.hpp"
#include "fabric/verbs/ports.hpp"
#include "fabric/base/meet.hpp"
#include "fabric/base/sockaddr.hpp"
#include "fabric/base/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

namespace fabric {

cm_event& cm_event::operator=(cm_event&& o) noexcept {
  if (this != &o) {
    reset();
    ev_ = std::exchange(o.ev_, nullptr);
  }
  return *this;
}

void cm_event::reset() noexcept {
  if (ev_) rdma_ack_cm_event(ev_);
  ev_ = nullptr;
}

std::string_view cm_event::name() const noexcept { return event_name(type()); }

std::string_view event_name(rdma_cm_event_type type) noexcept { return rdma_event_str(type); }

exit_code classify_event(rdma_cm_event_type type) noexcept {
  switch (type) {
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
    case RDMA_CM_EVENT_ADDR_CHANGE:
      return exit_code::resolve_failed;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      return exit_code::no_device;
    case RDMA_CM_EVENT_MULTICAST_ERROR:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
      return exit_code::connect_failed;
    default:
      return exit_code::protocol;
  }
}

error event_error(const cm_event& ev, std::string_view what) {
  int status = ev.status();
  std::string detail;
  if (ev.type() == RDMA_CM_EVENT_REJECTED)
    detail = fmt::format(" (reason {}; is a server listening?)", status);
  else if (status < 0)
    detail = fmt::format(" ({})", std::strerror(-status));
  else if (status > 0)
    detail = fmt::format(" (status {})", status);
  // Timeouts surface as UNREACHABLE/ADDR_ERROR with -ETIMEDOUT.
  exit_code code = status == -ETIMEDOUT ? exit_code::timeout : classify_event(ev.type());
  return error(code, fmt::format("{}: {}{}", what, ev.name(), detail));
}

cm_channel::cm_channel() {
  rdma_event_channel* ch = rdma_create_event_channel();
  if (!ch) {
    int err = errno;
    if (err == ENODEV || err == ENOENT)
      throw error(exit_code::no_device, "rdma_create_event_channel: no RDMA devices were detected");
    throw_errno(err, "rdma_create_event_channel");
  }
  ch_.reset(ch);
  set_nonblocking(ch_->fd);
}

cm_id cm_channel::create_id(rdma_port_space ps, void* context) {
  rdma_cm_id* id = nullptr;
  check_rc(rdma_create_id(ch_.get(), &id, context, ps), "rdma_create_id");
  return cm_id(id);
}

std::optional<cm_event> cm_channel::try_next() {
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(ch_.get(), &ev) == 0) {
      cm_event got(ev);
      if (refused(got)) continue;
      return got;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::nullopt;
    if (errno != EINTR) throw_errno(errno, "rdma_get_cm_event");
  }
}

void cm_channel::refuse_strangers(const rdma_cm_id* listener, std::span<const std::byte> key) {
  guarded_ = listener;
  key_.assign(key.begin(), key.end());
}

bool cm_channel::refused(cm_event& ev) {
  if (!guarded_ || ev.type() != RDMA_CM_EVENT_CONNECT_REQUEST || ev.listen_id() != guarded_ ||
      carries_key(private_data_of(ev), key_))
    return false;
  cm_id stranger(ev.id());
  ev.reset();
  rdma_reject(stranger.get(), nullptr, 0);
  return true;
}

std::vector<std::byte> private_data_of(const cm_event& ev) {
  bool ud = ev.id() && ev.id()->ps == RDMA_PS_UDP;
  const void* data = ud ? ev.ud().private_data : ev.conn().private_data;
  std::uint8_t len = ud ? ev.ud().private_data_len : ev.conn().private_data_len;
  if (!data || len == 0) return {};
  const auto* p = static_cast<const std::byte*>(data);
  return {p, p + len};
}

std::optional<cm_event> cm_channel::next(const deadline& until) {
  for (;;) {
    if (auto ev = try_next()) return ev;
    if (!wait_readable(ch_->fd, until)) return std::nullopt;
  }
}

cm_event cm_channel::expect(rdma_cm_event_type expected, const deadline& until, std::string_view what) {
  return expect_one_of({expected}, until, what);
}

cm_event cm_channel::expect_one_of(std::initializer_list<rdma_cm_event_type> expected, const deadline& until,
                                   std::string_view what) {
  auto ev = next(until);
  if (!ev) {
    std::string names;
    for (auto type : expected) names += fmt::format("{}{}", names.empty() ? "" : " or ", event_name(type));
    throw error(exit_code::timeout, fmt::format("{}: timed out waiting for {}", what, names));
  }
  if (std::find(expected.begin(), expected.end(), ev->type()) == expected.end() || ev->status() != 0)
    throw event_error(*ev, what);
  return std::move(*ev);
}

bool cm_channel::settle(std::size_t n, std::chrono::milliseconds quiet,
                        const std::function<bool(cm_event&)>& handle) {
  while (n > 0) {
    auto ev = next(deadline::after(quiet));
    if (!ev) return false;
    if (handle(*ev)) --n;
  }
  return true;
}

void cm_channel::adopt(rdma_cm_id* id) { check_rc(rdma_migrate_id(id, ch_.get()), "rdma_migrate_id"); }

ibv_context* sole_device() {
  int n = 0;
  std::unique_ptr<ibv_context*, release<&rdma_free_devices>> list(rdma_get_devices(&n));
  return list && n == 1 ? list.get()[0] : nullptr;
}

own_rdma own_rdma_at(const std::string& address, std::chrono::milliseconds lookup_timeout) {
  std::optional<cm_channel> channel;
  try {
    channel.emplace();
  } catch (const error& e) {
    if (e.code() == exit_code::no_device) return {e.what(), std::nullopt};
    throw;
  }
  addr_query q;
  q.node = address;
  q.flags = RAI_PASSIVE;
  q.port_space = RDMA_PS_TCP;
  q.lookup_timeout = lookup_timeout;
  auto info = resolve(q);
  cm_id id = channel->create_id(RDMA_PS_TCP);
  if (rdma_bind_addr(id.get(), info->ai_src_addr) != 0) {
    int err = errno;
    // Sure only of a literal address: this host's own lookup of a name
    // (its /etc/hosts naming its management network's address) may
    // differ from its peers'.
    if ((err == ENODEV || err == EADDRNOTAVAIL) && is_numeric_address(address))
      return {fmt::format("no RDMA device has the address {}", printable(address)), std::nullopt};
    throw_errno(err, fmt::format("rdma_bind_addr {} ({})", printable(address), format_addr(info->ai_src_addr)));
  }
  auto port = query_port(id.get());
  if (port.state != IBV_PORT_ACTIVE)
    return {fmt::format("{} port {} is {}", printable(port.device), port.port, port_state_name(port.state)), port};
  return {{}, port};
}

std::string peer_name(rdma_cm_id* id) {
  sockaddr* sa = rdma_get_peer_addr(id);
  return fmt::format("{}:{}", format_addr(sa), sockaddr_port(sa));
}

int resolve_try_ms(const deadline& until) {
  int left = until.poll_timeout();
  auto ms = static_cast<int>(resolve_try.count());
  return left >= 0 ? std::clamp(left, 1, ms) : ms;
}

int resolve_try_ms(const wait_limit& limit) { return std::min(limit.ms(), static_cast<int>(resolve_try.count())); }

bool retry_resolution(const cm_event& ev, const deadline& until) {
  return (ev.type() == RDMA_CM_EVENT_ADDR_ERROR || ev.type() == RDMA_CM_EVENT_ROUTE_ERROR) &&
         ev.status() == -ETIMEDOUT && !until.expired();
}

namespace {

/// One resolution step, tried until it succeeds, fails otherwise than by
/// the kernel's own timeout, or `until` passes. `start(ms)` asks the
/// kernel for a try of ms milliseconds.
template <class Start>
void resolve_step(cm_channel& ch, Start start, rdma_cm_event_type done, rdma_cm_event_type failed,
                  const deadline& until, const std::string& what) {
  for (;;) {
    check_rc(start(resolve_try_ms(until)), what);
    auto ev = ch.next(until);
    if (!ev) throw error(exit_code::timeout, fmt::format("{}: timed out waiting for {}", what, event_name(done)));
    if (ev->type() == done && ev->status() == 0) return;
    if (ev->type() == failed && retry_resolution(*ev, until)) continue;
    throw event_error(*ev, what);
  }
}

}  // namespace

void resolve_addr(cm_channel& ch, rdma_cm_id* id, sockaddr* src, sockaddr* dst, const wait_limit& limit) {
  resolve_step(ch, [&](int ms) { return rdma_resolve_addr(id, src, dst, ms); }, RDMA_CM_EVENT_ADDR_RESOLVED,
               RDMA_CM_EVENT_ADDR_ERROR, limit.next(), fmt::format("rdma_resolve_addr {}", format_addr(dst)));
}

void resolve_addr_route(cm_channel& ch, rdma_cm_id* id, sockaddr* src, sockaddr* dst, const wait_limit& limit) {
  std::string target = format_addr(dst);
  resolve_addr(ch, id, src, dst, limit);
  resolve_step(ch, [&](int ms) { return rdma_resolve_route(id, ms); }, RDMA_CM_EVENT_ROUTE_RESOLVED,
               RDMA_CM_EVENT_ROUTE_ERROR, limit.next(), fmt::format("rdma_resolve_route {}", target));
}

void answer_repeated_requests(cm_channel& channel,
                              const std::function<std::optional<std::uint32_t>(const cm_event&)>& qp_of,
                              std::vector<cm_id>& answered) {
  while (auto ev = channel.try_next()) {
    if (ev->type() != RDMA_CM_EVENT_CONNECT_REQUEST || ev->status() != 0) continue;
    auto qpn = qp_of(*ev);  // before the acknowledgement, which frees its private data
    cm_id id(ev->id());
    ev->reset();  // the id is ours once its request is acknowledged
    if (!qpn) {
      rdma_reject(id.get(), nullptr, 0);
      continue;
    }
    rdma_conn_param param{};
    param.qp_num = *qpn;
    if (rdma_accept(id.get(), &param) == 0) answered.push_back(std::move(id));
  }
}

}  // namespace fabric
