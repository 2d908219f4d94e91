#include "fabric/verbs/ports.hpp"

#include <fmt/format.h>

#include <endian.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <memory>
#include <system_error>

namespace fabric {

namespace fs = std::filesystem;

namespace {

/// The first line of a sysfs file; empty when there is none (a file that
/// is missing, or that the kernel refuses to read).
std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

fs::path device_dir(const fs::path& sysfs, std::string_view device) {
  return sysfs / "class" / "infiniband" / std::string(device);
}

/// The kernel's rate file of a port; empty when there is none.
std::string sysfs_rate(const fs::path& sysfs, const std::string& device, unsigned port) {
  return first_line(device_dir(sysfs, device) / "ports" / std::to_string(port) / "rate");
}

std::optional<unsigned> unsigned_of_text(std::string_view text) noexcept {
  if (!text.empty() && (text.front() == 'x' || text.front() == 'X')) text.remove_prefix(1);
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return v;
}

/// A link width file: nullopt when missing, unreadable or 0 (no link).
std::optional<unsigned> link_width(const fs::path& file) {
  auto w = unsigned_of_text(first_line(file));
  return w && *w > 0 ? w : std::nullopt;
}

std::optional<double> link_speed(const fs::path& file) { return pcie_speed_of_text(first_line(file)); }

template <class T>
std::optional<T> lower(std::optional<T> a, std::optional<T> b) {
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

port_info describe(const fs::path& sysfs, ibv_context* verbs, std::uint8_t port, const ibv_port_attr& pa,
                   const ibv_device_attr& da) {
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
  info.rate = sysfs_rate(sysfs, info.device, port);
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
  auto info = describe(default_sysfs, id->verbs, id->port_num, pa, da);
  if (id->route.num_paths > 0 && id->route.path_rec != nullptr) {
    auto route_mtu = mtu_bytes(id->route.path_rec->mtu);
    if (route_mtu != 0) info.path_mtu = std::min(info.path_mtu, route_mtu);
  }
  return info;
}

std::vector<port_info> all_ports(const fs::path& sysfs) {
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
      ports.push_back(describe(sysfs, ctx.get(), p, pa, da));
    }
  }
  return ports;
}

std::string port_netdev(const fs::path& sysfs, std::string_view device, unsigned port) {
  auto dev = device_dir(sysfs, device);
  if (auto roce = first_line(dev / "ports" / std::to_string(port) / "gid_attrs" / "ndevs" / "0"); !roce.empty()) return roce;
  if (auto parent = first_line(dev / "parent"); !parent.empty()) return parent;
  // IPoIB: a network device of the same PCI function, told apart by dev_port.
  std::error_code ec;
  std::string only;
  int seen = 0;
  for (const auto& net : fs::directory_iterator(dev / "device" / "net", ec)) {
    auto name = net.path().filename().string();
    auto dev_port = unsigned_of_text(first_line(net.path() / "dev_port"));
    if (dev_port && *dev_port + 1 == port) return name;
    if (!dev_port) only = name;
    ++seen;
  }
  return seen == 1 ? only : std::string();
}

std::optional<int> device_numa_node(const fs::path& sysfs, std::string_view device) {
  auto text = first_line(device_dir(sysfs, device) / "device" / "numa_node");
  int node = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), node);
  if (ec != std::errc() || end != text.data() + text.size() || node < 0 || node > 4095) return std::nullopt;
  return node;
}

std::optional<double> pcie_speed_of_text(std::string_view text) noexcept {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data() || !(v > 0)) return std::nullopt;
  return v;
}

unsigned pcie_generation(double gts) noexcept {
  for (unsigned g = 1; g <= 6; ++g)
    if (std::abs(gts - pcie_generation_gts(g)) < 0.01) return g;
  return 0;
}

double pcie_generation_gts(unsigned generation) noexcept {
  switch (generation) {
    case 1: return 2.5;
    case 2: return 5;
    case 3: return 8;
    case 4: return 16;
    case 5: return 32;
    case 6: return 64;
    default: return 0;
  }
}

std::optional<pcie_link> read_pcie_link(const fs::path& sysfs, std::string_view device) {
  std::error_code ec;
  auto function = fs::canonical(device_dir(sysfs, device) / "device", ec);
  if (ec) return std::nullopt;  // a software device: no parent at all
  auto has = [&](const fs::path& dir) {
    return fs::exists(dir / "current_link_width", ec) || fs::exists(dir / "max_link_width", ec) ||
           fs::exists(dir / "current_link_speed", ec) || fs::exists(dir / "max_link_speed", ec);
  };
  auto subsystem = fs::canonical(function / "subsystem", ec);
  if (!has(function) && (ec || subsystem.filename() != "pci")) return std::nullopt;
  pcie_link out;
  out.function = function.filename().string();
  out.width = link_width(function / "current_link_width");
  out.speed_gts = link_speed(function / "current_link_speed");
  out.max_width = link_width(function / "max_link_width");
  out.max_speed_gts = link_speed(function / "max_link_speed");
  // The slot: the port above the function, when it is a PCIe port (not the
  // host bridge's pci0000:00).
  if (auto slot = function.parent_path(); has(slot)) {
    out.max_width = lower(out.max_width, link_width(slot / "max_link_width"));
    out.max_speed_gts = lower(out.max_speed_gts, link_speed(slot / "max_link_speed"));
  }
  return out;
}

}  // namespace fabric
