#pragma once
/// CPUs by number: the kernel's CPU list text (sysfs cpulist files), the
/// CPUs of a NUMA node, and keeping a thread to some of them, so that what
/// it allocates first is touched on their node. Every sysfs read takes the
/// tree's root, so that tests run on a fake tree.

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace fabric {

/// The highest CPU number a list may name (the kernel's NR_CPUS limit is 8192).
inline constexpr unsigned max_cpu = 8191;

/// The CPUs of a list as the kernel writes it ("0-7,16-23", "3", "" for
/// none; a trailing line feed allowed), in order, each once; nullopt for
/// anything else (a range whose end is below its start, a number above
/// max_cpu, a stray character).
std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view text);

/// The CPUs of NUMA node `node` (sysfs devices/system/node/nodeN/cpulist
/// under `sysfs`); nullopt when the file is missing or does not parse.
std::optional<std::vector<unsigned>> node_cpus(const std::filesystem::path& sysfs, int node);

/// Keeps the calling thread to those of `cpus` it may run on already (a
/// launcher's or a cgroup's CPU set stands); false, and the thread left as
/// it was, when none of them is among those, or the kernel refuses.
bool keep_thread_to(const std::vector<unsigned>& cpus);

}  // namespace fabric
