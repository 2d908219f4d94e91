#pragma once
/// fabric-sweep health: one host alone, as a node health checker asks.

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/pair.hpp"
#include "fabric-sweep/rank/rails.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/verbs/ports.hpp"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sweep {

/// One port of a chosen device, and where IP traffic reaches it.
struct host_port {
  fabric::port_info info;
  std::string netdev;   ///< the network device the kernel ties to it; empty when none
  std::string address;  ///< that device's address (host_view::address_of); empty when none
};

/// A chosen device's PCIe link.
struct host_device {
  std::string name;
  std::optional<fabric::pcie_link> pcie;  ///< nullopt: no PCI function (rxe, siw)
};

/// A ping-pong from one of this host's rails to another: the client leaves
/// from `from`'s address for `to`'s, where the server listens.
struct rail_pair {
  std::size_t from = 0, to = 0;  ///< indexes of health_report::ports
  pair_result result;
};

/// One host, as a node health checker asks: the ports and PCIe links of
/// its chosen devices, an RC ping-pong with itself over its own address,
/// and one between each pair of its rails.
struct health_report {
  std::string address;                 ///< this host's, by the address rule
  std::vector<std::string> missing;    ///< devices of --device that have no port here
  std::vector<host_port> ports;        ///< the chosen devices' ports
  std::vector<host_device> devices;    ///< the chosen devices that have ports, in their ports' order
  std::optional<pair_result> self;     ///< the self-connection, once tried
  std::vector<rail_pair> rail_pairs;   ///< once tried (or found impossible: a rail without an address)
};

/// Fills the ports, devices and missing devices of `rep` from `ports` (as
/// verbs list them) and what `view` shows of each: the devices of --device
/// alone, every port's network device and address, every device's PCIe link.
void gather(const health_options& h, const host_view& view, std::vector<fabric::port_info> ports, health_report& rep);

/// The ports that are rails: every Active one, in order (indexes of rep.ports).
std::vector<std::size_t> rails(const health_report& rep);

// The rules (rules.cpp): each says why a part fails the host, in words
// an admin reads at once; empty when it does not.

/// "100 Gb/sec (4X EDR)": a port's rate in the kernel's words, else in
/// ours from its width and speed.
std::string rate_text(const fabric::port_info& p);

/// A port's line: "rxe0 port 1: Active, Ethernet, MTU 1024, 10 Gb/sec (4X QDR)".
std::string port_line(const fabric::port_info& p);

/// Why an Active port falls short of --expect-rate, --expect-width,
/// --expect-speed or --expect-mtu, as "rxe0 port 1: 2.5 Gb/sec (1X SDR),
/// expected 100"; empty when it does not.
std::string shortfall(const health_options& h, const fabric::port_info& p);

/// Why a port that is not Active fails the host ("the port is Down"):
/// always, unless --expect-ports is met by the others.
std::string port_state_problem(const health_options& h, const health_report& rep, const fabric::port_info& p);

/// The ports Active, and the ports the devices must have Active
/// (--expect-ports, else all of them).
std::size_t active_ports(const health_report& rep);
std::size_t expected_ports(const health_options& h, const health_report& rep);

/// A PCIe link in words: "x16 16.0 GT/s" ("x?" and "? GT/s" for what the
/// kernel does not say).
std::string pcie_text(std::optional<unsigned> width, std::optional<double> speed_gts);

/// A device's line: "mlx5_0: PCIe x16 16.0 GT/s of x16 16.0 GT/s"; empty for
/// a device without a PCIe link.
std::string device_line(const host_device& d);

/// Why a device's PCIe link fails the host: below --expect-pcie, or without
/// it below what the device and its slot can do ("mlx5_0: PCIe x8 8.0
/// GT/s, the slot and device can do x16 16.0 GT/s"); empty when it does
/// not, or when the device has no PCIe link.
std::string pcie_shortfall(const health_options& h, const host_device& d);

/// A rail in words: "rxe1 port 1 (10.0.1.1)".
std::string rail_name(const host_port& p);

/// The health check's verdict from what it found: the first rule broken,
/// in the order devices, ports, rates, PCIe, self-connection, rail pairs.
fabric::verdict judge(const options& opt, const health_report& rep);

/// The health subcommand's body: reads this host, pings, judges.
fabric::verdict health(const options& opt, health_report& rep, fabric::console& con);

void to_json(nlohmann::json& j, const options& opt, const health_report& rep);
/// The host's health as node_exporter textfile-collector gauges (prometheus.cpp).
std::string prometheus_text(const options& opt, const health_report& rep, const fabric::verdict& v);

/// The host's ping-pongs (pings.cpp), all at once, each side's wait
/// bounded by --timeout and its work by --pair-timeout: the
/// self-connection (a server thread listens on the host's address, another
/// connects to it) and, unless --no-intra, every rail to every later one,
/// each pair on its own rdma_cm port above --port; a pair with a side
/// without an address fails untried.
void ping_host(const options& opt, const std::string& host, health_report& rep);

}  // namespace sweep
