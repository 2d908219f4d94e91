#pragma once
/// The model of an InfiniBand subnet as `fabric-sweep discover` reads it:
/// its nodes and their ports, the links between them, each switch's linear
/// forwarding table and each connected port's counters; and an index over
/// it (GUIDs, LIDs, links) that the route walk and the report's locating
/// stand on. Plain data: the walk (walk.hpp) fills it, the document
/// (document.hpp) writes and reads it.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sweep::subnet {

/// NodeInfo's NodeType.
enum class node_type : std::uint8_t { ca = 1, switch_node = 2, router = 3 };

/// "ca", "switch", "router": the document's words.
std::string_view type_name(node_type t) noexcept;
std::optional<node_type> type_of(std::string_view word) noexcept;

/// PortInfo's PortState (1 Down ... 5 ActiveDefer) and PortPhysicalState
/// (1 Sleep ... 7 PhyTest), named as ibstat and ibnetdiscover name them;
/// 0 is "unknown".
std::string_view port_state_name(std::uint8_t state) noexcept;
std::string_view physical_state_name(std::uint8_t state) noexcept;
std::optional<std::uint8_t> port_state_of(std::string_view word) noexcept;
std::optional<std::uint8_t> physical_state_of(std::string_view word) noexcept;
inline constexpr std::uint8_t port_active = 4;
inline constexpr std::uint8_t physical_link_up = 5;

/// Link widths, PortInfo's LinkWidth bits: 1X, 4X, 8X, 12X, 2X.
inline constexpr std::array<std::pair<std::uint8_t, std::string_view>, 5> widths{
    {{1, "1X"}, {16, "2X"}, {2, "4X"}, {4, "8X"}, {8, "12X"}}};
/// Lanes of one width bit (0 for a mask that is not one bit).
int lanes(std::uint8_t width_bit) noexcept;

/// Link speeds as one mask: PortInfo's LinkSpeed bits (SDR 1, DDR 2, QDR 4)
/// below, its LinkSpeedExt bits (FDR 1, EDR 2, HDR 4, NDR 8) shifted four
/// up, so that one number orders every speed.
inline constexpr std::array<std::pair<std::uint8_t, std::string_view>, 7> speeds{
    {{1, "SDR"}, {2, "DDR"}, {4, "QDR"}, {16, "FDR"}, {32, "EDR"}, {64, "HDR"}, {128, "NDR"}}};
/// Gb/s of one lane at one speed bit (0 for a mask that is not one bit).
double lane_gbps(std::uint8_t speed_bit) noexcept;

/// A mask's highest width (by lanes) or speed bit; 0 when empty.
std::uint8_t widest(std::uint8_t widths_mask) noexcept;
std::uint8_t fastest(std::uint8_t speeds_mask) noexcept;

/// The words of a mask's bits ("1X", "4X"), in the order of the tables.
std::vector<std::string_view> width_words(std::uint8_t mask);
std::vector<std::string_view> speed_words(std::uint8_t mask);
/// The bit of one word; nullopt for a word that is not one.
std::optional<std::uint8_t> width_bit(std::string_view word) noexcept;
std::optional<std::uint8_t> speed_bit(std::string_view word) noexcept;

/// The counters kept of each connected port: PortCounters, and
/// PortCountersExtended's 64-bit data and packet counts where supported.
enum class counter : std::uint8_t {
  symbol_errors,
  link_error_recovery,
  link_downed,
  rcv_errors,
  xmit_discards,
  xmit_wait,
  xmit_data,
  rcv_data,
  xmit_packets,
  rcv_packets,
};
inline constexpr std::size_t counter_count = 10;

/// One counter's JSON key and whether its rise is a sign of a bad link.
struct counter_info {
  counter id;
  std::string_view key;
  bool error;
};
/// Every counter, in the order of `counter`: the one description the
/// document, the walk and the locating all read.
extern const std::array<counter_info, counter_count> counter_table;

/// One port's counters: a value for each counter the port answered.
struct port_counters {
  std::array<std::uint64_t, counter_count> value{};
  std::uint16_t present = 0;  ///< bit i: counter i was read
  bool extended = false;      ///< data and packets from PortCountersExtended (64-bit)

  [[nodiscard]] std::optional<std::uint64_t> get(counter c) const noexcept {
    auto i = static_cast<std::size_t>(c);
    if ((present >> i & 1U) == 0) return std::nullopt;
    return value[i];
  }
  void set(counter c, std::uint64_t v) noexcept {
    auto i = static_cast<std::size_t>(c);
    value[i] = v;
    present = static_cast<std::uint16_t>(present | 1U << i);
  }
  bool operator==(const port_counters&) const = default;
};

/// The port at the other end of a link.
struct peer_ref {
  std::uint64_t node_guid = 0;
  std::uint8_t port = 0;
  bool operator==(const peer_ref&) const = default;
};

/// One port of a node, as its PortInfo says.
struct port {
  std::uint8_t number = 0;
  std::uint64_t guid = 0;
  std::uint16_t lid = 0;  ///< a switch's ports all carry port 0's LID
  std::uint8_t lmc = 0;
  std::uint8_t state = 0;           ///< PortState
  std::uint8_t physical_state = 0;  ///< PortPhysicalState
  std::uint8_t width = 0, widths_enabled = 0, widths_supported = 0;  ///< width bits
  std::uint8_t speed = 0, speeds_enabled = 0, speeds_supported = 0;  ///< speed bits (see speeds)
  std::optional<peer_ref> peer;              ///< the linked port, when its node answered
  std::optional<port_counters> counters;     ///< read unless --no-counters or unanswered
  bool operator==(const port&) const = default;
};

/// A node of the subnet.
struct node {
  std::uint64_t guid = 0;
  node_type type = node_type::ca;
  std::string description;   ///< NodeDescription, as given (may hold any bytes)
  std::uint8_t port_count = 0;  ///< NumPorts
  std::vector<port> ports;   ///< the ports read, by number (a switch's port 0 first)
  /// A switch's linear forwarding table: the output port of each LID from
  /// 0; `no_port` where the table has no entry.
  std::vector<std::uint8_t> lft;
  std::string error;  ///< what this node did not answer (its table, its counters); empty when all
  bool operator==(const node&) const = default;

  [[nodiscard]] const port* find_port(std::uint8_t number) const noexcept;
};
/// An LFT entry without a port (IB's 0xFF).
inline constexpr std::uint8_t no_port = 0xFF;
/// LIDs a linear forwarding table holds (unicast LIDs end at 0xBFFF).
inline constexpr std::size_t max_lft = 0xC000;

/// A port that is up while the node behind it did not answer the walk.
struct unanswered {
  std::uint64_t node_guid = 0;  ///< the node whose port leads there
  std::uint8_t port = 0;
  std::string error;
  bool operator==(const unanswered&) const = default;
};

/// The whole subnet, when and from where it was read.
struct fabric {
  std::vector<node> nodes;
  std::vector<unanswered> silent;  ///< ports whose far node did not answer
  double taken_at = 0;             ///< seconds since the epoch, when the walk began
  std::string device;              ///< the CA the walk went out of
  std::uint8_t port = 0;           ///< and its port
  std::uint64_t from_node_guid = 0;
  std::uint16_t from_lid = 0;
  bool counters = true;            ///< whether the counters were read
  bool operator==(const fabric&) const = default;
};

/// One end of a link: a node (index into fabric::nodes) and a port.
struct end {
  std::uint32_t node = 0;
  std::uint8_t port = 0;
  bool operator==(const end&) const = default;
};

/// A link between two ports; `a` is the end of the lower (GUID, port).
struct link {
  end a, b;
};

/// Lookups over a fabric that the document does not store: nodes by GUID,
/// ports by LID, and the links. Holds a reference: the fabric must
/// outlive it and stay unchanged.
class index {
public:
  explicit index(const fabric& f);

  [[nodiscard]] const fabric& model() const noexcept { return f_; }
  [[nodiscard]] std::optional<std::uint32_t> node_of(std::uint64_t guid) const;
  /// The node and port that LID `lid` leads to (a switch's port 0).
  [[nodiscard]] std::optional<end> port_of_lid(std::uint16_t lid) const;
  /// The channel adapter port of GUID `guid`.
  [[nodiscard]] std::optional<end> port_of_guid(std::uint64_t guid) const;
  [[nodiscard]] const std::vector<link>& links() const noexcept { return links_; }
  /// The link out of a node's port; nullopt when the port is not linked.
  [[nodiscard]] std::optional<std::uint32_t> link_of(end e) const;
  /// The links of a node (each once).
  [[nodiscard]] std::vector<std::uint32_t> links_of(std::uint32_t node) const;
  /// The port a link reaches from `from` (its other end).
  [[nodiscard]] end far_end(std::uint32_t link, end from) const;
  [[nodiscard]] const node& at(std::uint32_t i) const { return f_.nodes[i]; }
  [[nodiscard]] const port* port_at(end e) const { return f_.nodes[e.node].find_port(e.port); }

private:
  const fabric& f_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_guid_;
  std::unordered_map<std::uint64_t, end> by_port_guid_;
  std::vector<end> by_lid_;        ///< LID -> port; node = UINT32_MAX where none
  std::vector<std::uint32_t> first_link_;  ///< node -> offset into port_links_
  std::vector<std::uint32_t> port_links_;  ///< per node, per port number: link + 1, 0 none
  std::vector<link> links_;
};

/// "0x0002c90300a1b2c3": a GUID as the documents write it.
std::string guid_text(std::uint64_t guid);
/// A GUID from its text ("0x" and 1 to 16 hex digits); nullopt otherwise.
std::optional<std::uint64_t> guid_of(std::string_view text) noexcept;

/// "leaf1": a node named for people, by its description (escaped) or,
/// without one, its GUID.
std::string node_name(const node& n);
/// "leaf1 port 5": a port named for people, by its node's description
/// (escaped) or, without one, its GUID.
std::string port_name(const node& n, std::uint8_t port);

}  // namespace sweep::subnet
