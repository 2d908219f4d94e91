// A host's rails: what --rails names, what this host has of each, and the
// plan the ranks agree at the start.
#include "fabric-sweep/rank/rails.hpp"
#include "fabric-sweep/rank/place.hpp"

#include "fabric/base/cpus.hpp"
#include "fabric/base/sockaddr.hpp"
#include "fabric/base/text.hpp"
#include "fabric/cli/console.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace sweep {

namespace {

bool is_template(std::string_view item) {
  return item.find("{host}") != std::string_view::npos || item.find("{short}") != std::string_view::npos;
}

/// A device name as sysfs may hold it, and not a template mistyped: a
/// brace belongs to {host} or {short}, never to a device.
bool device_name_ok(std::string_view d) {
  return !d.empty() && d != "." && d != ".." && std::none_of(d.begin(), d.end(), [](unsigned char c) {
    return c == '/' || c == ',' || c == '{' || c == '}' || std::isspace(c) != 0 || c < 0x20 || c >= 0x7f;
  });
}

/// The words of a port's state for a trouble: "its port is Down".
std::string port_trouble(const fabric::port_info& p) {
  return fmt::format("its port is {}", fabric::port_state_name(p.state));
}

/// A device's rail: its first Active port, else its first; the port's
/// network device and that device's address.
own_rail device_rail(const std::string& device, const std::vector<const fabric::port_info*>& ports, const host_view& view) {
  own_rail out;
  out.name = device;
  if (ports.empty()) {
    out.trouble = fmt::format("no RDMA device {}", fabric::printable(device));
    return out;
  }
  auto active = std::find_if(ports.begin(), ports.end(), [](const fabric::port_info* p) { return p->state == IBV_PORT_ACTIVE; });
  const auto& port = **(active == ports.end() ? ports.begin() : active);
  out.port = port;
  out.active = port.state == IBV_PORT_ACTIVE;
  out.cpus = device_cpus(view.sysfs, device);
  if (!out.active) {
    out.trouble = port_trouble(port);
    return out;
  }
  auto netdev = fabric::port_netdev(view.sysfs, device, port.port);
  if (netdev.empty()) {
    out.trouble = fmt::format("port {} has no network device", port.port);
    return out;
  }
  if (view.address_of) out.address = view.address_of(netdev);
  if (out.address.empty()) out.trouble = fmt::format("its network device {} has no address", fabric::printable(netdev));
  return out;
}

/// A rank's word on a rail as rank 0 keeps it, or nothing.
const rail_word* word_on(const std::vector<rail_word>& words, const std::string& name) {
  auto it = std::find_if(words.begin(), words.end(), [&name](const rail_word& w) { return w.name == name; });
  return it == words.end() ? nullptr : &*it;
}

}  // namespace

host_view this_host() { return {fabric::default_sysfs, fabric::interface_address}; }

rail_spec rail_spec_of(std::string_view text) {
  rail_spec out;
  if (text.empty()) return out;
  if (text == "auto") {
    out.by = rail_spec::kind::automatic;
    return out;
  }
  for (std::size_t at = 0;;) {
    auto comma = text.find(',', at);
    auto item = text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (item.empty()) fabric::cli::usage_error("--rails: an empty item in the list");
    if (item.size() > max_rail_name_bytes)
      fabric::cli::usage_error(fmt::format("--rails: '{}' is longer than {} bytes", fabric::printable(item), max_rail_name_bytes));
    auto kind = is_template(item) ? rail_spec::kind::templates : rail_spec::kind::devices;
    if (kind == rail_spec::kind::devices && !device_name_ok(item))
      fabric::cli::usage_error(fmt::format("--rails: '{}' is neither a device name nor an address template ({{host}}, {{short}})",
                                           fabric::printable(item)));
    if (kind == rail_spec::kind::templates &&
        std::any_of(item.begin(), item.end(), [](unsigned char c) { return std::isspace(c) != 0 || c < 0x20 || c >= 0x7f; }))
      fabric::cli::usage_error(fmt::format("--rails: '{}' is not an address template", fabric::printable(item)));
    if (out.by != rail_spec::kind::none && out.by != kind)
      fabric::cli::usage_error("--rails: give devices or address templates, not both");
    out.by = kind;
    if (std::find(out.items.begin(), out.items.end(), item) != out.items.end())
      fabric::cli::usage_error(fmt::format("--rails: '{}' is named twice", fabric::printable(item)));
    out.items.emplace_back(item);
    if (out.items.size() > max_rails) fabric::cli::usage_error(fmt::format("--rails: more than {} rails", max_rails));
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return out;
}

bool rail_order(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      auto end_a = i, end_b = j;
      while (end_a < a.size() && digit(a[end_a])) ++end_a;
      while (end_b < b.size() && digit(b[end_b])) ++end_b;
      // Leading zeros aside, the longer number is the larger.
      auto na = a.substr(i, end_a - i), nb = b.substr(j, end_b - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = end_a;
      j = end_b;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // names equal but for leading zeros: any fixed order
}

std::vector<unsigned> device_cpus(const std::filesystem::path& sysfs, std::string_view device) {
  auto node = fabric::device_numa_node(sysfs, device);
  if (!node) return {};
  return fabric::node_cpus(sysfs, *node).value_or(std::vector<unsigned>{});
}

std::vector<own_rail> find_rails(const rail_spec& spec, const host_view& view,
                                 const std::vector<fabric::port_info>& ports, const std::string& host,
                                 const std::function<fabric::own_rdma(const std::string&)>& at) {
  std::vector<own_rail> out;
  if (spec.by == rail_spec::kind::templates) {
    for (const auto& t : spec.items) {
      own_rail r;
      r.name = t;
      r.address = address_for(t, host);
      auto here = at ? at(r.address) : fabric::own_rdma{};
      r.trouble = here.trouble;
      r.port = here.port;
      r.active = here.port && here.port->state == IBV_PORT_ACTIVE;
      if (here.port) r.cpus = device_cpus(view.sysfs, here.port->device);
      out.push_back(std::move(r));
    }
    return out;
  }
  std::map<std::string, std::vector<const fabric::port_info*>> by_device;
  for (const auto& p : ports) by_device[p.device].push_back(&p);
  std::vector<std::string> devices = spec.items;
  if (spec.by == rail_spec::kind::automatic) {
    for (const auto& [d, _] : by_device)
      if (device_name_ok(d) && d.size() <= max_rail_name_bytes) devices.push_back(d);
    // Active devices first, so that a host of more devices than rails
    // keeps those it can use; then each in the rails' order.
    std::stable_sort(devices.begin(), devices.end(), rail_order);
    std::stable_partition(devices.begin(), devices.end(), [&](const std::string& d) {
      const auto& ps = by_device[d];
      return std::any_of(ps.begin(), ps.end(), [](const fabric::port_info* p) { return p->state == IBV_PORT_ACTIVE; });
    });
    if (devices.size() > max_rails) devices.resize(max_rails);
    std::sort(devices.begin(), devices.end(), rail_order);
  }
  for (const auto& d : devices) {
    auto found = by_device.find(d);
    out.push_back(device_rail(d, found == by_device.end() ? std::vector<const fabric::port_info*>{} : found->second, view));
  }
  return out;
}

std::vector<rail_word> words_of(const std::vector<own_rail>& mine) {
  std::vector<rail_word> out;
  for (const auto& r : mine) out.push_back({r.name, r.trouble.empty() ? r.address : std::string(), r.trouble, r.active});
  return out;
}

rail_plan agree_rails(const rail_spec& spec, const std::vector<std::optional<std::vector<rail_word>>>& words) {
  rail_plan plan;
  if (spec.by == rail_spec::kind::automatic) {
    std::set<std::string> active;
    for (const auto& w : words)
      if (w)
        for (const auto& r : *w)
          if (r.active) active.insert(r.name);
    plan.names.assign(active.begin(), active.end());
    std::sort(plan.names.begin(), plan.names.end(), rail_order);
    if (plan.names.size() > max_rails) plan.names.resize(max_rails);
  } else {
    plan.names = spec.items;
  }
  auto rails = plan.names.size();
  plan.address.resize(words.size());
  plan.trouble.resize(words.size());
  for (std::size_t r = 0; r < words.size(); ++r) {
    if (!words[r]) continue;
    auto& address = plan.address[r];
    auto& trouble = plan.trouble[r];
    address.assign(rails, {});
    trouble.assign(rails, {});
    auto here = static_cast<std::size_t>(
        std::count_if(plan.names.begin(), plan.names.end(), [&](const std::string& n) { return word_on(*words[r], n) != nullptr; }));
    for (std::size_t i = 0; i < rails; ++i) {
      const auto* w = word_on(*words[r], plan.names[i]);
      if (!w) {
        trouble[i] = fmt::format("no RDMA device {} ({} rail{} here, {} in the sweep)", plan.names[i], here,
                                 here == 1 ? "" : "s", rails);
        continue;
      }
      trouble[i] = w->trouble;
      if (w->trouble.empty()) address[i] = w->address;
      if (w->trouble.empty() && w->address.empty()) trouble[i] = "no address";
    }
  }
  return plan;
}

rail_plan plan_alone(const rail_spec& spec, const std::vector<own_rail>& mine, int rank, const std::vector<std::string>& hosts) {
  std::vector<std::optional<std::vector<rail_word>>> words(hosts.size());
  words[static_cast<std::size_t>(rank)] = words_of(mine);
  auto plan = agree_rails(spec, words);
  for (std::size_t r = 0; r < hosts.size(); ++r) {
    if (static_cast<int>(r) == rank) continue;
    plan.address[r].assign(plan.names.size(), {});
    plan.trouble[r].assign(plan.names.size(), {});
    for (std::size_t i = 0; i < plan.names.size(); ++i) {
      if (spec.by == rail_spec::kind::templates)
        plan.address[r][i] = address_for(plan.names[i], hosts[r]);
      else
        plan.trouble[r][i] = "its address on this rail is not known (no meeting with rank 0 at the start)";
    }
  }
  return plan;
}

const own_rail* rails_here::own(int rail) const {
  if (rail < 0 || rail >= plan.size()) return nullptr;
  const auto& name = plan.names[static_cast<std::size_t>(rail)];
  auto it = std::find_if(found.begin(), found.end(), [&name](const own_rail& r) { return r.name == name; });
  return it == found.end() ? nullptr : &*it;
}

std::string rails_here::cannot(int rank, int rail, const std::vector<std::string>& hosts) const {
  if (rank < 0 || static_cast<std::size_t>(rank) >= plan.address.size() || !plan.seated(rank))
    return fmt::format("{} said nothing of its rails at the start", hosts[static_cast<std::size_t>(rank)]);
  const auto& why = plan.trouble_of(rank, rail);
  if (why.empty() && !plan.address_of(rank, rail).empty()) return {};
  return fmt::format("{} cannot take part on rail {}: {}", hosts[static_cast<std::size_t>(rank)],
                     plan.names[static_cast<std::size_t>(rail)], why.empty() ? std::string("no address") : why);
}

}  // namespace sweep
