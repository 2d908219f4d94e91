#include "fabric/cm/ud.hpp"


#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace fabric {

std::uint32_t spill_bytes(std::uint32_t size, std::uint32_t port_mtu) noexcept {
  std::uint32_t most = port_mtu != 0 ? port_mtu : largest_mtu;
  return most > size ? most - size : 0;
}

std::optional<std::string> ud_size_problem(std::size_t size, const port_info& port) {
  if (size <= port.path_mtu) return std::nullopt;
  return fmt::format("message size {} is larger than the path MTU {} of {} port {}", size, port.path_mtu,
                     port.device, port.port);
}

void check_ud_size(std::size_t size, const port_info& port) {
  if (auto problem = ud_size_problem(size, port)) throw error(exit_code::no_device, *problem);
}

ud_config clamp_depths(ud_config cfg, std::uint64_t count, const port_info& port) noexcept {
  // Send and receive completions share one CQ.
  std::uint64_t limit = std::min<std::uint64_t>(port.max_qp_wr, port.max_cqe / 2);
  auto depth = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(count, 1, std::max<std::uint64_t>(limit, 1)));
  // Receives need a slot per message in flight (datagrams have no flow
  // control); sends reuse theirs once completed, so a deeper send queue
  // would only register more memory.
  cfg.send_depth = std::min(depth, max_send_depth);
  cfg.recv_depth = depth;
  return cfg;
}

ud_layout ud_layout::of(const ud_config& cfg, std::uint32_t spill) noexcept {
  ud_layout l;
  l.recv_stride = grh_bytes + (cfg.keep_payloads ? cfg.size : 0);
  l.send_at = std::uint64_t{cfg.recv_depth} * l.recv_stride;
  l.shared_at = l.send_at + std::uint64_t{cfg.send_depth} * cfg.size;
  l.shared = (cfg.keep_payloads ? 0 : cfg.size) + spill;
  l.bytes = l.shared_at + l.shared;
  return l;
}

void check_buffer_budget(const ud_config& cfg, std::uint64_t qps) {
  std::uint64_t per_qp = ud_layout::of(cfg, largest_mtu).bytes;
  if (qps == 0 || per_qp <= max_buffer_bytes / qps) return;
  throw error(exit_code::usage,
              fmt::format("{} QP(s) x {} receive and {} send slots of {} bytes need {} MiB of buffers, above the "
                          "limit of {} MiB: lower -c, -C or -S",
                          qps, cfg.recv_depth, cfg.send_depth, std::uint64_t{cfg.size},
                          (per_qp >> 20) * qps, max_buffer_bytes >> 20));
}

std::optional<unsigned long> parse_number(const std::string& text, unsigned long max) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long v = std::strtoul(text.c_str(), &end, 0);
  if (errno != 0 || *end != '\0' || text[0] == '-' || v > max) return std::nullopt;
  return v;
}

std::optional<rdma_port_space> parse_port_space(const std::string& name, const std::string& number) {
  if (!name.empty()) {
    // The original matches by prefix, case-insensitively.
    if (strncasecmp(name.c_str(), "ipoib", 5) == 0) return RDMA_PS_IPOIB;
    if (strncasecmp(name.c_str(), "udp", 3) == 0) return RDMA_PS_UDP;
    return std::nullopt;
  }
  if (!number.empty()) {
    auto v = parse_number(number, 0xffff);
    if (v && (*v == RDMA_PS_UDP || *v == RDMA_PS_IPOIB)) return static_cast<rdma_port_space>(*v);
    return std::nullopt;
  }
  return RDMA_PS_UDP;
}

std::string port_space_name(rdma_port_space ps) {
  switch (ps) {
    case RDMA_PS_UDP: return "udp";
    case RDMA_PS_IPOIB: return "ipoib";
    default: return fmt::format("{:#x}", static_cast<int>(ps));
  }
}

ud_endpoint::ud_endpoint(rdma_cm_id* id, const ud_config& cfg) : id_(id), cfg_(cfg) {
  if (id->verbs == nullptr) throw error(exit_code::no_device, "rdma_cm id is not bound to an RDMA device");
  // Whatever the caller's size, a receive must hold what the port can
  // deliver: anyone who knows the QPN and Q_Key can send that much.
  ibv_port_attr pa{};
  check_ret(ibv_query_port(id->verbs, id->port_num, &pa), "ibv_query_port");
  std::uint32_t spill = spill_bytes(cfg.size, mtu_bytes(pa.active_mtu));
  pd_ = alloc_pd(id->verbs);
  cq_ = std::make_unique<event_cq>(id->verbs, static_cast<int>(cfg.send_depth + cfg.recv_depth), false);
  // One registration: the receive slots, the send slots, and one area for
  // what no receive keeps: the payloads when they are not read, and every
  // receive's overflow (such datagrams are dropped unread, so a slot's
  // worth of memory per receive would buy nothing).
  layout_ = ud_layout::of(cfg, spill);
  buf_ = registered_buffer(pd_.get(), layout_.bytes, IBV_ACCESS_LOCAL_WRITE);

  ibv_qp_init_attr_ex attr{};
  attr.qp_context = this;
  attr.send_cq = cq_->get();
  attr.recv_cq = cq_->get();
  attr.cap.max_send_wr = cfg.send_depth;
  attr.cap.max_recv_wr = cfg.recv_depth;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = layout_.shared > 0 ? 2 : 1;
  attr.qp_type = IBV_QPT_UD;
  attr.sq_sig_all = 0;
  attr.comp_mask = IBV_QP_INIT_ATTR_PD;
  attr.pd = pd_.get();
  if (cfg.block_self_loopback) {
    auto blocking = attr;
    blocking.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
    blocking.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
    if (rdma_create_qp_ex(id, &blocking) == 0) {
      loopback_blocked_ = true;
    } else {
      loopback_note_ = fmt::format("{} cannot block multicast loopback on its QPs ({}); loopback stays on",
                                   ibv_get_device_name(id->verbs->device), std::strerror(errno));
    }
  }
  if (!loopback_blocked_) check_rc(rdma_create_qp_ex(id, &attr), "rdma_create_qp");
  qp_ = cm_qp(id);
}

std::uint32_t ud_endpoint::qkey() const {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  check_ret(ibv_query_qp(qp_.get(), &attr, IBV_QP_QKEY, &init), "ibv_query_qp");
  return attr.qkey;
}

void ud_endpoint::post_recv(std::uint32_t slot) {
  std::array<ibv_sge, 2> sges{};
  sges[0] = {buf_.addr() + slot * layout_.recv_stride, static_cast<std::uint32_t>(layout_.recv_stride), buf_.lkey()};
  int n = 1;
  if (layout_.shared > 0) sges[n++] = {buf_.addr() + layout_.shared_at, layout_.shared, buf_.lkey()};
  ibv_recv_wr wr{};
  wr.wr_id = slot;
  wr.sg_list = sges.data();
  wr.num_sge = n;
  fabric::post_recv(qp_.get(), wr);
}

void ud_endpoint::post_recvs(std::uint32_t n) {
  for (std::uint32_t slot = 0; slot < n; ++slot) post_recv(slot);
}

std::span<const std::byte> ud_endpoint::payload(std::uint32_t slot, std::size_t length) const noexcept {
  if (!cfg_.keep_payloads) return {};
  return {buf_.data() + slot * layout_.recv_stride + grh_bytes, std::min<std::size_t>(length, cfg_.size)};
}

std::span<std::byte> ud_endpoint::send_slot(std::uint32_t slot) const noexcept {
  return {buf_.data() + layout_.send_at + std::size_t{slot} * cfg_.size, cfg_.size};
}

void ud_endpoint::post_send(const ud_destination& to, std::uint32_t slot, bool signaled) {
  const ud_send one{slot, signaled};
  post_sends(to, {&one, 1});
}

void ud_endpoint::post_sends(const ud_destination& to, std::span<const ud_send> sends) {
  std::array<ibv_sge, send_batch> sges{};
  std::array<ibv_send_wr, send_batch> wrs{};
  while (!sends.empty()) {
    std::size_t n = std::min(sends.size(), send_batch);
    for (std::size_t i = 0; i < n; ++i) {
      auto slot = sends[i].slot;
      sges[i] = ibv_sge{buf_.addr() + layout_.send_at + std::size_t{slot} * cfg_.size, cfg_.size, buf_.lkey()};
      auto& wr = wrs[i];
      wr = ibv_send_wr{};
      wr.wr_id = send_flag | slot;
      wr.next = i + 1 < n ? &wrs[i + 1] : nullptr;
      wr.sg_list = &sges[i];
      wr.num_sge = 1;
      wr.opcode = IBV_WR_SEND_WITH_IMM;
      wr.send_flags = sends[i].signaled ? IBV_SEND_SIGNALED : 0;
      wr.imm_data = htobe32(qpn());
      wr.wr.ud.ah = to.ah.get();
      wr.wr.ud.remote_qpn = to.qpn;
      wr.wr.ud.remote_qkey = to.qkey;
    }
    fabric::post_send(qp_.get(), wrs[0]);
    sends = sends.subspan(n);
  }
}

address_handle ud_endpoint::create_ah(const ibv_ah_attr& attr) const {
  auto copy = attr;
  return address_handle(check_ptr(ibv_create_ah(pd_.get(), &copy), "ibv_create_ah"));
}

ibv_grh ud_endpoint::grh(std::uint32_t slot) const {
  // A slot is grh_bytes (+ size) long, so a GRH need not be aligned for
  // ibv_grh: it is copied out, not referred to in place.
  ibv_grh h;
  std::memcpy(&h, buf_.data() + slot * layout_.recv_stride, sizeof h);
  return h;
}

address_handle ud_endpoint::create_reply_ah(const ibv_wc& wc) const {
  auto copy = wc;
  auto h = grh(slot_of(wc));
  return address_handle(
      check_ptr(ibv_create_ah_from_wc(pd_.get(), &copy, &h, id_->port_num), "ibv_create_ah_from_wc"));
}

namespace {

/// The IPv4 header sum, which a valid header's checksum makes 0xffff.
bool ipv4_checksum_ok(const std::uint8_t* h) {
  std::uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += static_cast<std::uint32_t>(h[i] << 8 | h[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

}  // namespace

std::optional<ibv_gid> source_gid(const ibv_grh& grh) {
  // RoCE v2 over IPv4 puts the IPv4 header in the last 20 of the 40 bytes;
  // a GRH or an IPv6 header fills all 40 with IP version 6 first.
  // When the first nibble says 6, the bytes at 20 are believed to be an
  // IPv4 header only if its checksum holds (a GRH's GIDs can look like one);
  // when it does not say 6, they are one (a loopback path may leave the
  // checksum unset).
  const auto* b = reinterpret_cast<const std::uint8_t*>(&grh);
  const std::uint8_t* ip4 = b + 20;
  bool v4 = (b[0] >> 4) == 6 ? ip4[0] == 0x45 && ipv4_checksum_ok(ip4) : (ip4[0] >> 4) == 4;
  if (v4) {
    ibv_gid gid{};
    gid.raw[10] = gid.raw[11] = 0xff;
    std::memcpy(gid.raw + 12, ip4 + 12, 4);
    return gid;
  }
  if ((b[0] >> 4) == 6) return grh.sgid;
  return std::nullopt;
}

bool from_source(const ibv_wc& wc, const ibv_grh& grh, const ibv_gid& source, std::optional<std::uint32_t> qpn) {
  if (qpn && wc.src_qp != *qpn) return false;
  if ((wc.wc_flags & IBV_WC_GRH) == 0) return true;
  auto sgid = source_gid(grh);
  return sgid && std::memcmp(sgid->raw, source.raw, sizeof source.raw) == 0;
}

std::optional<ibv_gid> roce_gid_of(const sockaddr* addr) {
  ibv_gid gid{};
  if (addr->sa_family == AF_INET6) {
    std::memcpy(gid.raw, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, 16);
    return gid;
  }
  if (addr->sa_family == AF_INET) {
    gid.raw[10] = gid.raw[11] = 0xff;
    std::memcpy(gid.raw + 12, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, 4);
    return gid;
  }
  return std::nullopt;
}

}  // namespace fabric
