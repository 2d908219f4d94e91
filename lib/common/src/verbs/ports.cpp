#include "fabric/verbs/ports.hpp"

#include <fmt/format.h>

#include <endian.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <memory>

namespace fabric {

namespace {

/// The kernel's rate file of a port; empty when there is none.
std::string sysfs_rate(const std::string& device, unsigned port) {
  std::ifstream in(fmt::format("/sys/class/infiniband/{}/ports/{}/rate", device, port));
  std::string line;
  std::getline(in, line);
  return line;
}

port_info describe(ibv_context* verbs, std::uint8_t port, const ibv_port_attr& pa, const ibv_device_attr& da) {
  port_info info;
  info.device = ibv_get_device_name(verbs->device);
  info.port = port;
  info.link_layer = pa.link_layer;
  info.state = static_cast<std::uint8_t>(pa.state);
  info.active_mtu = mtu_bytes(pa.active_mtu);
  info.path_mtu = info.active_mtu;
  info.max_qp_wr = static_cast<std::uint32_t>(std::max(da.max_qp_wr, 1));
  info.max_cqe = static_cast<std::uint32_t>(std::max(da.max_cqe, 2));
  info.active_width = pa.active_width;
  info.active_speed = pa.active_speed;
  info.rate = sysfs_rate(info.device, port);
  info.node_guid = be64toh(da.node_guid);
  info.lid = pa.lid;
  ibv_gid gid{};
  if (ibv_query_gid(verbs, port, 0, &gid) == 0) info.port_guid = be64toh(gid.global.interface_id);
  return info;
}

}  // namespace

std::string guid_text(std::uint64_t guid) { return fmt::format("{:#018x}", guid); }

std::uint32_t mtu_bytes(unsigned mtu_enum) noexcept { return mtu_enum >= 1 && mtu_enum <= 5 ? 128u << mtu_enum : 0; }

std::string_view link_layer_name(std::uint8_t link_layer) noexcept {
  switch (link_layer) {
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    default: return "unspecified";
  }
}

std::string_view port_state_name(std::uint8_t state) noexcept {
  switch (state) {
    case IBV_PORT_DOWN: return "Down";
    case IBV_PORT_INIT: return "Init";
    case IBV_PORT_ARMED: return "Armed";
    case IBV_PORT_ACTIVE: return "Active";
    case IBV_PORT_ACTIVE_DEFER: return "ActiveDefer";
    default: return "Nop";
  }
}

std::string_view width_name(std::uint8_t width) noexcept {
  switch (width) {
    case 1: return "1X";
    case 2: return "4X";
    case 4: return "8X";
    case 8: return "12X";
    case 16: return "2X";
    default: return "unknown";
  }
}

unsigned width_lanes(std::uint8_t width) noexcept {
  switch (width) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}

std::string_view speed_name(std::uint8_t speed) noexcept {
  switch (speed) {
    case 1: return "SDR";
    case 2: return "DDR";
    case 4: return "QDR";
    case 8: return "FDR10";
    case 16: return "FDR";
    case 32: return "EDR";
    case 64: return "HDR";
    case 128: return "NDR";
    default: return "unknown";
  }
}

double lane_gbps(std::uint8_t speed) noexcept {
  switch (speed) {
    case 1: return 2.5;
    case 2: return 5;
    case 4: return 10;
    case 8: return 10;
    case 16: return 14;
    case 32: return 25;
    case 64: return 50;
    case 128: return 100;
    default: return 0;
  }
}

std::optional<double> rate_of_text(std::string_view text) noexcept {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data() || v < 0) return std::nullopt;
  return v;
}

std::optional<double> port_info::rate_gbps() const noexcept {
  if (auto r = rate_of_text(rate)) return r;
  double lanes = width_lanes(active_width), lane = lane_gbps(active_speed);
  if (lanes > 0 && lane > 0) return lanes * lane;
  return std::nullopt;
}

port_info query_port(rdma_cm_id* id) {
  if (id->verbs == nullptr) throw error(exit_code::no_device, "rdma_cm id is not bound to an RDMA device");
  std::string device = ibv_get_device_name(id->verbs->device);
  ibv_port_attr pa{};
  check_ret(ibv_query_port(id->verbs, id->port_num, &pa), fmt::format("ibv_query_port {} port {}", device, id->port_num));
  ibv_device_attr da{};
  check_ret(ibv_query_device(id->verbs, &da), fmt::format("ibv_query_device {}", device));
  auto info = describe(id->verbs, id->port_num, pa, da);
  if (id->route.num_paths > 0 && id->route.path_rec != nullptr) {
    auto route_mtu = mtu_bytes(id->route.path_rec->mtu);
    if (route_mtu != 0) info.path_mtu = std::min(info.path_mtu, route_mtu);
  }
  return info;
}

std::vector<port_info> all_ports() {
  std::vector<port_info> ports;
  int n = 0;
  std::unique_ptr<ibv_device*, void (*)(ibv_device**)> list(ibv_get_device_list(&n), ibv_free_device_list);
  if (!list) return ports;
  for (int i = 0; i < n; ++i) {
    std::unique_ptr<ibv_context, int (*)(ibv_context*)> ctx(ibv_open_device(list.get()[i]), ibv_close_device);
    if (!ctx) continue;
    ibv_device_attr da{};
    if (ibv_query_device(ctx.get(), &da) != 0) continue;
    for (std::uint8_t p = 1; p <= da.phys_port_cnt; ++p) {
      ibv_port_attr pa{};
      if (ibv_query_port(ctx.get(), p, &pa) != 0) continue;
      ports.push_back(describe(ctx.get(), p, pa, da));
    }
  }
  return ports;
}

}  // namespace fabric
