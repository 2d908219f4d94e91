// What health reads of a host: the chosen devices' ports, the network
// device and address of each, and each device's PCIe link.
#include "fabric-sweep/health/health.hpp"

#include <algorithm>

namespace sweep {

void gather(const health_options& h, const host_view& view, std::vector<fabric::port_info> ports, health_report& rep) {
  auto chosen = [&h](const std::string& device) {
    return h.devices.empty() || std::find(h.devices.begin(), h.devices.end(), device) != h.devices.end();
  };
  std::erase_if(ports, [&](const fabric::port_info& p) { return !chosen(p.device); });
  for (const auto& d : h.devices)
    if (std::none_of(ports.begin(), ports.end(), [&d](const fabric::port_info& p) { return p.device == d; }))
      rep.missing.push_back(d);
  for (auto& p : ports) {
    host_port hp{std::move(p), {}, {}};
    hp.netdev = fabric::port_netdev(view.sysfs, hp.info.device, hp.info.port);
    if (!hp.netdev.empty() && view.address_of) hp.address = view.address_of(hp.netdev);
    if (std::none_of(rep.devices.begin(), rep.devices.end(), [&hp](const host_device& d) { return d.name == hp.info.device; }))
      rep.devices.push_back({hp.info.device, fabric::read_pcie_link(view.sysfs, hp.info.device)});
    rep.ports.push_back(std::move(hp));
  }
}

std::vector<std::size_t> rails(const health_report& rep) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rep.ports.size(); ++i)
    if (rep.ports[i].info.state == IBV_PORT_ACTIVE) out.push_back(i);
  return out;
}

}  // namespace sweep
