#include "subnet.hpp"

#include "fabric/base/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

namespace sweep::subnet {

namespace {

constexpr std::array<std::string_view, 6> state_words{"unknown", "Down", "Init", "Armed", "Active", "ActiveDefer"};
constexpr std::array<std::string_view, 8> physical_words{"unknown",  "Sleep",         "Polling",          "Disabled",
                                                         "Training", "LinkUp",        "LinkErrorRecovery", "PhyTest"};

template <std::size_t N>
std::optional<std::uint8_t> word_index(const std::array<std::string_view, N>& words, std::string_view w) {
  for (std::size_t i = 1; i < N; ++i)
    if (words[i] == w) return static_cast<std::uint8_t>(i);
  return std::nullopt;
}

template <std::size_t N>
std::vector<std::string_view> words_of(const std::array<std::pair<std::uint8_t, std::string_view>, N>& table,
                                       std::uint8_t mask) {
  std::vector<std::string_view> out;
  for (const auto& [bit, word] : table)
    if ((mask & bit) != 0) out.push_back(word);
  return out;
}

template <std::size_t N>
std::optional<std::uint8_t> bit_of(const std::array<std::pair<std::uint8_t, std::string_view>, N>& table,
                                   std::string_view w) {
  for (const auto& [bit, word] : table)
    if (word == w) return bit;
  return std::nullopt;
}

constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

}  // namespace

std::string_view type_name(node_type t) noexcept {
  switch (t) {
    case node_type::ca: return "ca";
    case node_type::switch_node: return "switch";
    case node_type::router: return "router";
  }
  return "ca";
}

std::optional<node_type> type_of(std::string_view word) noexcept {
  if (word == "ca") return node_type::ca;
  if (word == "switch") return node_type::switch_node;
  if (word == "router") return node_type::router;
  return std::nullopt;
}

std::string_view port_state_name(std::uint8_t s) noexcept { return s < state_words.size() ? state_words[s] : "unknown"; }
std::string_view physical_state_name(std::uint8_t s) noexcept {
  return s < physical_words.size() ? physical_words[s] : "unknown";
}
std::optional<std::uint8_t> port_state_of(std::string_view w) noexcept { return word_index(state_words, w); }
std::optional<std::uint8_t> physical_state_of(std::string_view w) noexcept { return word_index(physical_words, w); }

int lanes(std::uint8_t bit) noexcept {
  switch (bit) {
    case 1: return 1;
    case 16: return 2;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    default: return 0;
  }
}

double lane_gbps(std::uint8_t bit) noexcept {
  switch (bit) {
    case 1: return 2.5;
    case 2: return 5.0;
    case 4: return 10.0;
    case 16: return 14.0625;
    case 32: return 25.78125;
    case 64: return 53.125;
    case 128: return 106.25;
    default: return 0;
  }
}

std::uint8_t widest(std::uint8_t mask) noexcept {
  std::uint8_t best = 0;
  for (const auto& [bit, word] : widths)
    if ((mask & bit) != 0 && lanes(bit) > lanes(best)) best = bit;
  return best;
}

std::uint8_t fastest(std::uint8_t mask) noexcept {
  for (auto it = speeds.rbegin(); it != speeds.rend(); ++it)
    if ((mask & it->first) != 0) return it->first;
  return 0;
}

std::vector<std::string_view> width_words(std::uint8_t mask) { return words_of(widths, mask); }
std::vector<std::string_view> speed_words(std::uint8_t mask) { return words_of(speeds, mask); }
std::optional<std::uint8_t> width_bit(std::string_view w) noexcept { return bit_of(widths, w); }
std::optional<std::uint8_t> speed_bit(std::string_view w) noexcept { return bit_of(speeds, w); }

const std::array<counter_info, counter_count> counter_table{{
    {counter::symbol_errors, "symbol_errors", true},
    {counter::link_error_recovery, "link_error_recovery", true},
    {counter::link_downed, "link_downed", true},
    {counter::rcv_errors, "rcv_errors", true},
    {counter::xmit_discards, "xmit_discards", true},
    {counter::xmit_wait, "xmit_wait", false},
    {counter::xmit_data, "xmit_data", false},
    {counter::rcv_data, "rcv_data", false},
    {counter::xmit_packets, "xmit_packets", false},
    {counter::rcv_packets, "rcv_packets", false},
}};

const port* node::find_port(std::uint8_t number) const noexcept {
  auto it = std::lower_bound(ports.begin(), ports.end(), number,
                             [](const port& p, std::uint8_t n) { return p.number < n; });
  return it != ports.end() && it->number == number ? &*it : nullptr;
}

index::index(const fabric& f) : f_(f) {
  const auto count = static_cast<std::uint32_t>(f.nodes.size());
  by_guid_.reserve(count);
  first_link_.resize(count + 1);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& n = f.nodes[i];
    by_guid_.emplace(n.guid, i);
    first_link_[i + 1] = first_link_[i] + n.port_count + 1U;
    for (const auto& p : n.ports) {
      if (n.type != node_type::switch_node && p.guid != 0) by_port_guid_.emplace(p.guid, end{i, p.number});
      bool owns_lid = n.type != node_type::switch_node || p.number == 0;
      if (!owns_lid || p.lid == 0) continue;
      std::size_t span = std::size_t{1} << std::min<std::uint8_t>(p.lmc, 7);
      std::size_t last = std::min<std::size_t>(p.lid + span, max_lft);
      if (by_lid_.size() < last) by_lid_.resize(last, end{none, 0});
      for (std::size_t lid = p.lid; lid < last; ++lid) by_lid_[lid] = end{i, p.number};
    }
  }
  port_links_.assign(first_link_.back(), 0);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& n = f.nodes[i];
    for (const auto& p : n.ports) {
      if (!p.peer || p.number > n.port_count) continue;
      auto j = node_of(p.peer->node_guid);
      if (!j) continue;
      const auto* q = f.nodes[*j].find_port(p.peer->port);
      // Only a link both ends agree on; the reader has named the others.
      if (q == nullptr || !q->peer || q->peer->node_guid != n.guid || q->peer->port != p.number) continue;
      if (q->number > f.nodes[*j].port_count) continue;
      end here{i, p.number}, there{*j, q->number};
      bool lower = std::pair(n.guid, p.number) < std::pair(f.nodes[*j].guid, q->number);
      if (!lower) continue;  // each link once, from its lower end
      if (here == there) continue;
      links_.push_back({here, there});
      auto id = static_cast<std::uint32_t>(links_.size());
      port_links_[first_link_[i] + p.number] = id;
      port_links_[first_link_[*j] + q->number] = id;
    }
  }
}

std::optional<std::uint32_t> index::node_of(std::uint64_t guid) const {
  auto it = by_guid_.find(guid);
  if (it == by_guid_.end()) return std::nullopt;
  return it->second;
}

std::optional<end> index::port_of_lid(std::uint16_t lid) const {
  if (lid >= by_lid_.size() || by_lid_[lid].node == none) return std::nullopt;
  return by_lid_[lid];
}

std::optional<end> index::port_of_guid(std::uint64_t guid) const {
  auto it = by_port_guid_.find(guid);
  if (it == by_port_guid_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::uint32_t> index::link_of(end e) const {
  if (e.node + 1 >= first_link_.size()) return std::nullopt;
  auto at = first_link_[e.node] + e.port;
  if (at >= first_link_[e.node + 1]) return std::nullopt;
  auto id = port_links_[at];
  if (id == 0) return std::nullopt;
  return id - 1;
}

std::vector<std::uint32_t> index::links_of(std::uint32_t node) const {
  std::vector<std::uint32_t> out;
  for (auto at = first_link_[node]; at < first_link_[node + 1]; ++at)
    if (port_links_[at] != 0) out.push_back(port_links_[at] - 1);
  return out;
}

end index::far_end(std::uint32_t l, end from) const {
  const auto& k = links_[l];
  return k.a == from ? k.b : k.a;
}

std::string guid_text(std::uint64_t guid) { return fmt::format("0x{:016x}", guid); }

std::optional<std::uint64_t> guid_of(std::string_view text) noexcept {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return std::nullopt;
  std::uint64_t v = 0;
  auto [end_at, ec] = std::from_chars(text.data() + 2, text.data() + text.size(), v, 16);
  if (ec != std::errc() || end_at != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string node_name(const node& n) {
  return n.description.empty() ? guid_text(n.guid) : ::fabric::printable(n.description);
}

std::string port_name(const node& n, std::uint8_t port) { return fmt::format("{} port {}", node_name(n), port); }

}  // namespace sweep::subnet
