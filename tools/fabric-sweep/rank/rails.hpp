#pragma once
/// A host's rails (--rails): what the option names (every device with an
/// Active port, a list of devices, or address templates), what this host
/// has of each (its port, network device, address and NUMA node's CPUs,
/// read through a sysfs root that tests replace), the order the ranks
/// agree on, and the plan they agree at the start: every rank's address
/// on each rail, or what keeps it off it.

#include "fabric/cm/cm.hpp"
#include "fabric/verbs/ports.hpp"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sweep {

/// Where a rank or the health check reads this host: the kernel's sysfs,
/// and a network device's address. Tests give a fake tree and a table.
struct host_view {
  std::filesystem::path sysfs = fabric::default_sysfs;
  /// A network device's IPv4 address (else its first IPv6 address that is
  /// not link-local); empty when it has none.
  std::function<std::string(const std::string& netdev)> address_of;
};

/// The view of the running host: /sys, and the addresses getifaddrs lists.
host_view this_host();

/// The most rails a sweep takes, and the longest rail name and address:
/// what a rank's line may carry, and --rails may list.
inline constexpr std::size_t max_rails = 16;
inline constexpr std::size_t max_rail_name_bytes = 64;
inline constexpr std::size_t max_rail_address_bytes = 255;

/// What --rails names.
struct rail_spec {
  enum class kind { none, automatic, devices, templates };
  kind by = kind::none;
  std::vector<std::string> items;  ///< the devices or templates, in the order given

  [[nodiscard]] bool given() const noexcept { return by != kind::none; }
};

/// --rails's text: empty (one rail, the address rule's), "auto", or a
/// comma-separated list of devices ("mlx5_0,mlx5_1") or of address
/// templates ("{host}-ib0,{host}-ib1": an item with {host} or {short} is
/// one). An empty item, a name twice, a device name with a slash, a space
/// or a control character, a list of both kinds, more than max_rails, an
/// item longer than max_rail_name_bytes: a usage error.
rail_spec rail_spec_of(std::string_view text);

/// Rail names in the rails' order: by name, the numbers in them by value
/// ("mlx5_2" before "mlx5_10").
bool rail_order(std::string_view a, std::string_view b);

/// One rail of this host, as it found it.
struct own_rail {
  std::string name;     ///< the device (auto, devices) or the template (templates)
  std::string address;  ///< where its peers reach it; empty when it has none
  std::string trouble;  ///< what keeps it from the sweep ("its port is Down"); empty when nothing
  bool active = false;  ///< its port is Active (auto: a rail of the sweep when any host's is)
  std::optional<fabric::port_info> port;  ///< the port it uses, when known
  std::vector<unsigned> cpus;  ///< its device's NUMA node's CPUs; empty when not known
};

/// What this host has of the rails `spec` names: auto, every device that
/// has a port, in rail order (its first Active port, else its first); a
/// list of devices, each as listed ("no RDMA device mlx5_1" for one not
/// here); each port's network device and that device's address through
/// `view`; templates, the address for `host` and the port that `at`
/// finds there. At most max_rails.
std::vector<own_rail> find_rails(const rail_spec& spec, const host_view& view,
                                 const std::vector<fabric::port_info>& ports, const std::string& host,
                                 const std::function<fabric::own_rdma(const std::string&)>& at);

/// The CPUs of `device`'s NUMA node (device/numa_node under `sysfs`, then
/// that node's cpulist); empty when either is not known (a software
/// device, a host of one node).
std::vector<unsigned> device_cpus(const std::filesystem::path& sysfs, std::string_view device);

/// What a rank tells rank 0 of one of its rails at the start.
struct rail_word {
  std::string name, address, trouble;
  bool active = false;
};
/// Its rails as a rank tells them.
std::vector<rail_word> words_of(const std::vector<own_rail>& mine);

/// The rails the ranks agreed on at the start, and each rank's seat on
/// each: its address there, or what keeps it off it.
struct rail_plan {
  std::vector<std::string> names;  ///< in the agreed order
  /// By rank, then by rail: the address (empty: none) and the trouble
  /// (empty: none); a rank rank 0 did not hear has empty rows.
  std::vector<std::vector<std::string>> address, trouble;

  [[nodiscard]] int size() const noexcept { return static_cast<int>(names.size()); }
  [[nodiscard]] bool seated(int rank) const { return !address[static_cast<std::size_t>(rank)].empty(); }
  [[nodiscard]] const std::string& address_of(int rank, int rail) const {
    return address[static_cast<std::size_t>(rank)][static_cast<std::size_t>(rail)];
  }
  [[nodiscard]] const std::string& trouble_of(int rank, int rail) const {
    return trouble[static_cast<std::size_t>(rank)][static_cast<std::size_t>(rail)];
  }
};

/// Rank 0's plan from every rank's word (`words[r]`, nullopt for a rank
/// not heard): the names of the list (devices, templates), or every name
/// some rank has Active, in rail order, at most max_rails (auto); each
/// rank's address on each, or its trouble: its own, or that it has no
/// such rail ("no RDMA device rxe1 (1 rail here, 2 in the sweep)").
rail_plan agree_rails(const rail_spec& spec, const std::vector<std::optional<std::vector<rail_word>>>& words);

/// A rank's plan without rank 0's answer: its own rails; a peer's address
/// from the templates, else not known (the peer's rails fail, saying so).
rail_plan plan_alone(const rail_spec& spec, const std::vector<own_rail>& mine, int rank,
                     const std::vector<std::string>& hosts);

/// This rank on its rails: what it found of them, and the plan the ranks
/// agreed at the start (or its own, without rank 0's answer).
struct rails_here {
  rail_spec spec;
  bool cross = false;           ///< --cross-rails
  std::vector<own_rail> found;  ///< as this host found them, before the start
  rail_plan plan;

  /// What this host found of agreed rail `rail`; nullptr when nothing.
  [[nodiscard]] const own_rail* own(int rail) const;
  /// Why `rank` cannot meet on `rail`, as its pairs say it ("node07
  /// cannot take part on rail mlx5_3: its port is Down"); empty when it can.
  [[nodiscard]] std::string cannot(int rank, int rail, const std::vector<std::string>& hosts) const;
};

}  // namespace sweep
