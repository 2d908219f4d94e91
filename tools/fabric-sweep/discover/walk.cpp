// The walk over rdma-core's MAD libraries. libibnetdisc finds the nodes
// and links with directed-route SMPs; libibmad then reads each switch's
// linear forwarding table (SMPs by the same directed route) and each
// linked port's counters (PMA queries by LID, so they need the SM to have
// assigned LIDs). Every MAD waits at most --timeout for its answer.
#include "walk.hpp"

#include "fabric/base/error.hpp"
#include "fabric/base/handles.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>
#include <infiniband/ibnetdisc.h>
#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace sweep::subnet {

using ::fabric::exit_code;

namespace {

using discovered = std::unique_ptr<ibnd_fabric_t, ::fabric::release<&ibnd_destroy_fabric>>;
using mad_port = std::unique_ptr<ibmad_port, ::fabric::release<&mad_rpc_close_port>>;

/// umad_get_ca's answer, released with it.
struct ca_info {
  umad_ca_t ca{};
  bool held = false;
  explicit ca_info(const char* name) { held = umad_get_ca(name, &ca) == 0; }
  ~ca_info() {
    if (held) umad_release_ca(&ca);
  }
  ca_info(const ca_info&) = delete;
  ca_info& operator=(const ca_info&) = delete;
};

// PMA ClassPortInfo CapabilityMask bits (IBA 16.1.2).
constexpr std::uint32_t pm_ext_width = 1U << 9;
constexpr std::uint32_t pm_ext_width_noietf = 1U << 10;
constexpr std::uint32_t pm_xmit_wait = 1U << 12;

constexpr std::uint8_t active = 4;

/// The CA and port to walk from: the ones asked for, or the first
/// InfiniBand port that is Active.
std::pair<std::string, int> choose_port(const walk_options& opt) {
  if (umad_init() < 0) throw ::fabric::error(exit_code::no_device, "cannot use the umad interface (no ib_umad?)");
  std::array<char[UMAD_CA_NAME_LEN], 32> names{};
  int count = umad_get_cas_names(names.data(), static_cast<int>(names.size()));
  if (count <= 0) throw ::fabric::error(exit_code::no_device, "no InfiniBand device found (umad)");
  std::string seen;
  for (int i = 0; i < count; ++i) {
    std::string name(names[i]);
    if (!opt.device.empty() && name != opt.device) continue;
    ca_info info(name.c_str());
    if (!info.held) continue;
    for (int p = 1; p <= info.ca.numports && p < UMAD_CA_MAX_PORTS; ++p) {
      const auto* port = info.ca.ports[p];
      if (port == nullptr || (opt.port != 0 && p != opt.port)) continue;
      // umad2sim says "IB"; a RoCE port says "Ethernet" and has no SMI.
      bool ib = std::strcmp(port->link_layer, "Ethernet") != 0;
      if (ib && port->state == active) return {name, p};
      seen += fmt::format("{}{} port {}: {}{}", seen.empty() ? "" : ", ", ::fabric::printable(name), p,
                          ib ? "not Active" : "link layer ", ib ? "" : ::fabric::printable(port->link_layer));
    }
  }
  if (!opt.device.empty() && seen.empty())
    throw ::fabric::error(exit_code::no_device,
                          opt.port != 0 ? fmt::format("no port {} of {}", opt.port, ::fabric::printable(opt.device))
                                        : fmt::format("no InfiniBand device {}", ::fabric::printable(opt.device)));
  throw ::fabric::error(exit_code::no_device, seen.empty() ? std::string("no InfiniBand port")
                                                           : fmt::format("no Active InfiniBand port: {}", seen));
}

/// Prints the walk's progress once a second, after its first second.
class progress_clock {
public:
  explicit progress_clock(const progress_sink& sink) : sink_(sink), start_(std::chrono::steady_clock::now()) {}
  /// `what()` is the line; built only when it is printed.
  template <class Line>
  void tick(Line what) {
    if (!sink_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    sink_(what());
  }
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

private:
  const progress_sink& sink_;
  std::chrono::steady_clock::time_point start_, last_{};
};

/// libibnetdisc's walk is one call: a thread says it is still going.
class ticker {
public:
  ticker(progress_clock& clock) : thread_([this, &clock] {
    std::unique_lock lock(mutex_);
    while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; }))
      clock.tick([&] { return fmt::format("walking the subnet: {:.0f} s", clock.seconds()); });
  }) {}
  ~ticker() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  ticker(const ticker&) = delete;
  ticker& operator=(const ticker&) = delete;

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

std::uint8_t field8(const std::uint8_t* info, enum MAD_FIELDS f) {
  return static_cast<std::uint8_t>(mad_get_field(const_cast<std::uint8_t*>(info), 0, f));
}

port port_of(const ibnd_port_t& p, const ibnd_node_t& n) {
  port out;
  const auto* info = p.info;
  out.number = static_cast<std::uint8_t>(p.portnum);
  out.guid = p.guid;
  out.lid = p.base_lid;
  out.lmc = p.lmc;
  out.state = field8(info, IB_PORT_STATE_F);
  out.physical_state = field8(info, IB_PORT_PHYS_STATE_F);
  out.width = field8(info, IB_PORT_LINK_WIDTH_ACTIVE_F);
  out.widths_enabled = field8(info, IB_PORT_LINK_WIDTH_ENABLED_F);
  out.widths_supported = field8(info, IB_PORT_LINK_WIDTH_SUPPORTED_F);
  // A switch's ports 1-N say whether extended speeds are read in port 0's
  // capability mask; a CA's port in its own.
  const auto* caps = n.type == IB_NODE_SWITCH && n.ports[0] != nullptr ? n.ports[0]->info : info;
  bool extended = (mad_get_field(const_cast<std::uint8_t*>(caps), 0, IB_PORT_CAPMASK_F) & (1U << 14)) != 0;
  auto ext = [&](enum MAD_FIELDS f) -> std::uint8_t {
    if (!extended) return 0;
    auto v = field8(info, f);
    return v >= 30 ? 0 : static_cast<std::uint8_t>((v & 0xF) << 4);
  };
  auto base = [&](enum MAD_FIELDS f) { return static_cast<std::uint8_t>(field8(info, f) & 0x7); };
  auto ext_active = ext(IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
  out.speed = ext_active != 0 ? ext_active : base(IB_PORT_LINK_SPEED_ACTIVE_F);
  out.speeds_enabled = static_cast<std::uint8_t>(base(IB_PORT_LINK_SPEED_ENABLED_F) | ext(IB_PORT_LINK_SPEED_EXT_ENABLED_F));
  out.speeds_supported =
      static_cast<std::uint8_t>(base(IB_PORT_LINK_SPEED_SUPPORTED_F) | ext(IB_PORT_LINK_SPEED_EXT_SUPPORTED_F));
  if (out.state <= 1) out.width = out.speed = 0;  // Down: nothing is active
  if (p.remoteport != nullptr && p.remoteport->node != nullptr)
    out.peer = peer_ref{p.remoteport->node->guid, static_cast<std::uint8_t>(p.remoteport->portnum)};
  return out;
}

node node_of(const ibnd_node_t& n) {
  node out;
  out.guid = n.guid;
  out.type = n.type == IB_NODE_SWITCH ? node_type::switch_node : n.type == IB_NODE_ROUTER ? node_type::router : node_type::ca;
  out.description.assign(n.nodedesc, strnlen(n.nodedesc, IB_SMP_DATA_SIZE));
  out.port_count = static_cast<std::uint8_t>(std::clamp(n.numports, 0, 254));
  for (int i = 0; i <= out.port_count; ++i)
    if (n.ports != nullptr && n.ports[i] != nullptr && (i > 0 || n.type == IB_NODE_SWITCH))
      out.ports.push_back(port_of(*n.ports[i], n));
  return out;
}

/// Reads a switch's linear forwarding table, 64 LIDs a MAD.
void read_lft(node& out, const ibnd_node_t& n, ibmad_port* mad) {
  auto top = static_cast<std::size_t>(mad_get_field(const_cast<std::uint8_t*>(n.switchinfo), 0, IB_SW_LINEAR_FDB_TOP_F));
  if (top >= max_lft) top = max_lft - 1;
  out.lft.assign(top + 1, no_port);
  ib_portid_t path = n.path_portid;
  std::array<std::uint8_t, IB_SMP_DATA_SIZE> block{};
  for (std::size_t b = 0; b * 64 <= top; ++b) {
    ::fabric::throw_if_interrupted();
    if (smp_query_via(block.data(), &path, IB_ATTR_LINEARFORWTBL, static_cast<unsigned>(b), 0, mad) == nullptr) {
      out.lft.clear();
      out.error = fmt::format("its forwarding table did not answer (LIDs {}-{})", b * 64, b * 64 + 63);
      return;
    }
    for (std::size_t i = 0; i < 64 && b * 64 + i <= top; ++i) out.lft[b * 64 + i] = block[i];
  }
}

/// Reads the counters of a node's linked ports: PortCounters, and
/// PortCountersExtended's 64-bit data and packets where the PMA has them.
void read_counters(node& out, const ibnd_node_t& n, ibmad_port* mad) {
  std::uint16_t lid = 0;
  for (const auto& p : out.ports)
    if (p.lid != 0 && (out.type != node_type::switch_node || p.number == 0)) {
      lid = p.lid;
      break;
    }
  bool linked = std::any_of(out.ports.begin(), out.ports.end(), [](const port& p) { return p.peer.has_value(); });
  if (!linked) return;
  auto fail = [&](std::string why) {
    if (out.error.empty()) out.error = std::move(why);
  };
  if (lid == 0) return fail("no LID (is a subnet manager running?): its counters were not read");
  ib_portid_t at{};
  ib_portid_set(&at, lid, 0, 0);
  std::array<std::uint8_t, 1024> buf{};
  std::uint32_t caps = 0;
  if (pma_query_via(buf.data(), &at, 0, 0, CLASS_PORT_INFO, mad) != nullptr)
    caps = mad_get_field(buf.data(), 0, IB_CPI_CAPMASK_F);
  (void)n;
  for (auto& p : out.ports) {
    if (!p.peer) continue;
    ::fabric::throw_if_interrupted();
    buf.fill(0);
    if (pma_query_via(buf.data(), &at, p.number, 0, IB_GSI_PORT_COUNTERS, mad) == nullptr) {
      fail(fmt::format("the counters of port {} did not answer", p.number));
      continue;
    }
    port_counters c;
    auto get = [&](enum MAD_FIELDS f) { return static_cast<std::uint64_t>(mad_get_field(buf.data(), 0, f)); };
    c.set(counter::symbol_errors, get(IB_PC_ERR_SYM_F));
    c.set(counter::link_error_recovery, get(IB_PC_LINK_RECOVERS_F));
    c.set(counter::link_downed, get(IB_PC_LINK_DOWNED_F));
    c.set(counter::rcv_errors, get(IB_PC_ERR_RCV_F));
    c.set(counter::xmit_discards, get(IB_PC_XMT_DISCARDS_F));
    if ((caps & pm_xmit_wait) != 0) c.set(counter::xmit_wait, get(IB_PC_XMT_WAIT_F));
    c.set(counter::xmit_data, get(IB_PC_XMT_BYTES_F));
    c.set(counter::rcv_data, get(IB_PC_RCV_BYTES_F));
    c.set(counter::xmit_packets, get(IB_PC_XMT_PKTS_F));
    c.set(counter::rcv_packets, get(IB_PC_RCV_PKTS_F));
    if ((caps & (pm_ext_width | pm_ext_width_noietf)) != 0) {
      buf.fill(0);
      if (pma_query_via(buf.data(), &at, p.number, 0, IB_GSI_PORT_COUNTERS_EXT, mad) != nullptr) {
        auto get64 = [&](enum MAD_FIELDS f) { return mad_get_field64(buf.data(), 0, f); };
        c.set(counter::xmit_data, get64(IB_PC_EXT_XMT_BYTES_F));
        c.set(counter::rcv_data, get64(IB_PC_EXT_RCV_BYTES_F));
        c.set(counter::xmit_packets, get64(IB_PC_EXT_XMT_PKTS_F));
        c.set(counter::rcv_packets, get64(IB_PC_EXT_RCV_PKTS_F));
        c.extended = true;
      }
    }
    p.counters = c;
  }
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

fabric walk(const walk_options& opt, const progress_sink& progress) {
  auto [device, port_number] = choose_port(opt);
  fabric out;
  out.taken_at = unix_now();
  out.device = device;
  out.port = static_cast<std::uint8_t>(port_number);
  out.counters = opt.counters;
  int wait_ms = static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(opt.timeout.count(), 1, 86'400'000));

  // A port that cannot be opened (not root) says so before anything is
  // sent; it is closed again while libibnetdisc walks (umad2sim takes one
  // open port at a time).
  std::array<int, 2> classes{IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS};
  auto open_port = [&] {
    errno = 0;
    mad_port mad(mad_rpc_open_port(device.data(), port_number, classes.data(), static_cast<int>(classes.size())));
    if (!mad) {
      int err = errno != 0 ? errno : EACCES;
      throw ::fabric::error(exit_code::no_device,
                            fmt::format("cannot send MADs from {} port {}: {}{}", ::fabric::printable(device), port_number,
                                        std::strerror(err),
                                        err == EACCES || err == EPERM ? " (discover needs root, as ibnetdiscover does)" : ""));
    }
    mad_rpc_set_timeout(mad.get(), wait_ms);
    mad_rpc_set_retries(mad.get(), 1);
    return mad;
  };
  open_port().reset();

  progress_clock clock(progress);
  ibnd_config cfg{};
  // libibnetdisc sends each SMP once more when the first is not answered:
  // half of --timeout each, so that an answer is waited for --timeout.
  cfg.timeout_ms = static_cast<unsigned>(std::max(1, wait_ms / 2));
  cfg.retries = 1;
  discovered found;
  {
    ticker still_going(clock);
    found.reset(ibnd_discover_fabric(device.data(), port_number, nullptr, &cfg));
  }
  ::fabric::throw_if_interrupted();
  if (!found || found->from_node == nullptr)
    throw ::fabric::error(exit_code::timeout,
                          fmt::format("the walk from {} port {} found no subnet (rdma-core's libibnetdisc gave up)",
                                      ::fabric::printable(device), port_number));
  out.from_node_guid = found->from_node->guid;
  if (auto* from = found->from_node->ports[found->from_portnum]; from != nullptr) out.from_lid = from->base_lid;

  auto mad = open_port();
  std::vector<const ibnd_node_t*> raw;
  for (auto* n = found->nodes; n != nullptr; n = n->next) raw.push_back(n);
  out.nodes.reserve(raw.size());
  for (const auto* n : raw) out.nodes.push_back(node_of(*n));

  // A port that trained (LinkUp) whose far node is not in the walk: that
  // node did not answer.
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const auto& n = *raw[i];
    for (int p = 1; p <= n.numports; ++p) {
      const auto* q = n.ports != nullptr ? n.ports[p] : nullptr;
      if (q == nullptr || q->remoteport != nullptr) continue;
      bool reaches = n.type == IB_NODE_SWITCH || (&n == found->from_node && p == found->from_portnum);
      if (reaches && field8(q->info, IB_PORT_PHYS_STATE_F) == physical_link_up)
        out.silent.push_back({n.guid, static_cast<std::uint8_t>(p),
                              fmt::format("the node behind {} did not answer", port_name(out.nodes[i], static_cast<std::uint8_t>(p)))});
    }
  }

  std::size_t switches = 0, done = 0;
  for (const auto* n : raw) switches += n->type == IB_NODE_SWITCH ? 1 : 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i]->type != IB_NODE_SWITCH) continue;
    read_lft(out.nodes[i], *raw[i], mad.get());
    ++done;
    clock.tick([&] { return fmt::format("forwarding tables: {} of {} switches", done, switches); });
  }
  if (opt.counters)
    for (std::size_t i = 0; i < raw.size(); ++i) {
      read_counters(out.nodes[i], *raw[i], mad.get());
      clock.tick([&] { return fmt::format("counters: {} of {} nodes", i + 1, raw.size()); });
    }
  std::sort(out.nodes.begin(), out.nodes.end(), [](const node& a, const node& b) {
    return std::pair(a.type != node_type::switch_node, a.guid) < std::pair(b.type != node_type::switch_node, b.guid);
  });
  return out;
}

}  // namespace sweep::subnet
