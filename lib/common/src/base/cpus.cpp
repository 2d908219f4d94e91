#include "fabric/base/cpus.hpp"

#include <sched.h>

#include <charconv>
#include <fstream>
#include <memory>
#include <set>
#include <string>

namespace fabric {

namespace {

/// A whole number of digits alone, up to max_cpu.
std::optional<unsigned> cpu_number(std::string_view text) {
  unsigned v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || v > max_cpu) return std::nullopt;
  return v;
}

/// A CPU set sized for max_cpu, owned.
struct cpu_mask {
  std::size_t bytes = CPU_ALLOC_SIZE(max_cpu + 1);
  std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set{CPU_ALLOC(max_cpu + 1), [](cpu_set_t* s) { CPU_FREE(s); }};
  cpu_mask() { CPU_ZERO_S(bytes, set.get()); }
};

}  // namespace

std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  std::set<unsigned> cpus;
  while (!text.empty()) {
    auto comma = text.find(',');
    auto item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return std::nullopt;  // "0-3,"
    auto dash = item.find('-');
    auto lo = cpu_number(item.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : cpu_number(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return std::nullopt;
    for (unsigned c = *lo; c <= *hi; ++c) cpus.insert(c);
  }
  return std::vector<unsigned>(cpus.begin(), cpus.end());
}

std::optional<std::vector<unsigned>> node_cpus(const std::filesystem::path& sysfs, int node) {
  if (node < 0) return std::nullopt;
  std::ifstream in(sysfs / "devices" / "system" / "node" / ("node" + std::to_string(node)) / "cpulist");
  std::string line;
  if (!in || !std::getline(in, line) || line.size() > 65536) return std::nullopt;
  return parse_cpu_list(line);
}

bool keep_thread_to(const std::vector<unsigned>& cpus) {
  cpu_mask allowed, wanted;
  if (sched_getaffinity(0, allowed.bytes, allowed.set.get()) != 0) return false;
  bool any = false;
  for (unsigned c : cpus)
    if (c <= max_cpu && CPU_ISSET_S(c, allowed.bytes, allowed.set.get())) {
      CPU_SET_S(c, wanted.bytes, wanted.set.get());
      any = true;
    }
  return any && sched_setaffinity(0, wanted.bytes, wanted.set.get()) == 0;
}

}  // namespace fabric
