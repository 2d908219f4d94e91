#pragma once
/// The local RDMA ports, as verbs and the kernel report them: state, link
/// layer, MTU, width, speed and rate, and the device's queue limits; and
/// what sysfs says around them: a port's network device and a device's
/// PCIe link. Every sysfs read takes the tree's root, so that tests run on
/// a fake tree.

#include "fabric/base/error.hpp"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabric {

/// Bytes of an IB MTU enum (IBV_MTU_1024 -> 1024; 1 -> 256 ... 5 -> 4096);
/// 0 for an unknown value.
std::uint32_t mtu_bytes(unsigned mtu_enum) noexcept;

/// The largest MTU of any port (InfiniBand's 4096): the most payload one
/// datagram can carry.
inline constexpr std::uint32_t largest_mtu = 4096;

/// "InfiniBand", "Ethernet", or "unspecified".
std::string_view link_layer_name(std::uint8_t link_layer) noexcept;

/// A port's state as ibstat names it: "Down", "Init", "Armed", "Active",
/// "ActiveDefer", or "Nop".
std::string_view port_state_name(std::uint8_t state) noexcept;

/// A port's active width as ibstat names it ("1X", "4X", ...), and its lanes (0 unknown).
std::string_view width_name(std::uint8_t width) noexcept;
unsigned width_lanes(std::uint8_t width) noexcept;

/// A port's active speed as ibstat names it ("SDR", "EDR", "HDR", ...), and
/// a lane's rate in Gb/s as the kernel counts it (0 unknown).
std::string_view speed_name(std::uint8_t speed) noexcept;
double lane_gbps(std::uint8_t speed) noexcept;

/// The kernel's words for a port's rate ("100 Gb/sec (4X EDR)"): its Gb/s,
/// or nullopt when the text does not start with a number.
std::optional<double> rate_of_text(std::string_view text) noexcept;

/// One port of a local device.
struct port_info {
  std::string device;              ///< "rxe0"
  std::uint8_t port = 0;           ///< port number
  std::uint8_t link_layer = 0;     ///< IBV_LINK_LAYER_*
  std::uint8_t state = 0;          ///< IBV_PORT_*
  std::uint32_t active_mtu = 0;    ///< bytes
  std::uint32_t path_mtu = 0;      ///< bytes: the active MTU, lowered to the resolved route's
  std::uint32_t max_qp_wr = 0;     ///< device limit on work requests per queue
  std::uint32_t max_cqe = 0;       ///< device limit on CQ entries
  std::uint8_t active_width = 0;   ///< IBV width bits (width_name)
  std::uint8_t active_speed = 0;   ///< IBV speed bits (speed_name)
  std::string rate;                ///< the kernel's words, from sysfs: "100 Gb/sec (4X EDR)"; empty when it does not say
  std::uint64_t node_guid = 0;     ///< the device's node GUID, host order (0 unknown)
  std::uint64_t port_guid = 0;     ///< the port's GUID: its GID 0's interface ID, host order (0 unknown)
  std::uint16_t lid = 0;           ///< the port's LID (InfiniBand; 0 on Ethernet)
  /// The port's rate in Gb/s: the kernel's, else width x speed; nullopt when neither is known.
  [[nodiscard]] std::optional<double> rate_gbps() const noexcept;
};

/// A GUID as ibnetdiscover writes it: "0x0002c903000e0b72".
std::string guid_text(std::uint64_t guid);

/// Where the kernel's sysfs is mounted.
inline const std::filesystem::path default_sysfs{"/sys"};

/// Queries the device and port of a bound or resolved id.
port_info query_port(rdma_cm_id* id);

/// Ports of every RDMA device on this host (their rate text read under `sysfs`).
std::vector<port_info> all_ports(const std::filesystem::path& sysfs = default_sysfs);

/// The network device the kernel ties to a port ("eth1", "ib0"); empty
/// when it names none. RoCE: the port's GID attributes; else the parent of
/// a software device (rxe, siw); else the network device of the same PCI
/// function whose dev_port is the port's (IPoIB, as rdma-core's ibdev2netdev).
std::string port_netdev(const std::filesystem::path& sysfs, std::string_view device, unsigned port);

/// The NUMA node of an RDMA device's PCI function (sysfs
/// class/infiniband/DEVICE/device/numa_node); nullopt when the device has
/// none (rxe, siw), or the kernel says -1 (one node, or none known).
std::optional<int> device_numa_node(const std::filesystem::path& sysfs, std::string_view device);

/// The PCIe link of an RDMA device's PCI function, as sysfs reports it.
/// A figure the kernel does not give (or gives as "Unknown", or width 0)
/// is nullopt.
struct pcie_link {
  std::string function;                  ///< the PCI function, "0000:3b:00.0"
  std::optional<unsigned> width;         ///< lanes it trained at (current_link_width)
  std::optional<double> speed_gts;       ///< GT/s a lane (current_link_speed)
  /// The most the link can do: the lower of the function's own maximum
  /// (max_link_width, max_link_speed) and its slot's, the port above it.
  std::optional<unsigned> max_width;
  std::optional<double> max_speed_gts;
};

/// The PCIe link of `device` (through sysfs class/infiniband/DEVICE/device);
/// nullopt when the device has no PCI function (rxe, siw).
std::optional<pcie_link> read_pcie_link(const std::filesystem::path& sysfs, std::string_view device);

/// GT/s of a sysfs link speed ("16.0 GT/s PCIe", "8 GT/s"); nullopt when
/// the text says none ("Unknown").
std::optional<double> pcie_speed_of_text(std::string_view text) noexcept;

/// The PCIe generation of a lane's speed: 2.5 GT/s is 1, 5 is 2, 8 is 3,
/// 16 is 4, 32 is 5, 64 is 6; 0 for another figure.
unsigned pcie_generation(double gts) noexcept;

/// A lane's speed of a PCIe generation (1 to 6), in GT/s; 0 for another.
double pcie_generation_gts(unsigned generation) noexcept;

}  // namespace fabric
