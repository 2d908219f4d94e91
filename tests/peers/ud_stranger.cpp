// A udaddy client with a stranger beside it, for the UD tests. It connects
// to a udaddy server as udaddy does (SIDR), and before it sends a word, a
// second QP from another GID of this host (the address FROM, which must be
// on a local interface) sends datagrams of STRANGER_SIZE bytes (default:
// SIZE) to the server's QP with rdma_cm's UDP Q_Key. Then the client sends
// COUNT messages of SIZE bytes (default 100, udaddy's -S) and waits for
// the server's COUNT replies: a server that took the stranger for its
// client answers the stranger instead, and one whose receives cannot hold
// the stranger's datagrams has lost its QP. With FLOOD_MS, the client
// sends only half of its COUNT messages, and the stranger then floods the
// server for FLOOD_MS without a pause: a server whose wait took strangers'
// datagrams for its client's progress would wait as long as the flood.
//   ud_stranger FROM SERVER COUNT [SIZE [STRANGER_SIZE [FLOOD_MS]]]
// Exits 0 when every reply came back (with FLOOD_MS: once the flood is
// over), 1 when not, 2 on bad use.
#include "stranger_qp.hpp"

#include "fabric/verbs/addr.hpp"
#include "fabric/cm/cm.hpp"
#include "fabric/base/handles.hpp"
#include "fabric/base/idle_deadline.hpp"
#include "fabric/cm/ud.hpp"
#include "fabric/flows/ud_traffic.hpp"
#include "fabric/verbs/verbs.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace {

constexpr int stranger_messages = 5;

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 4 || argc > 7) {
    fmt::print(stderr, "usage: ud_stranger FROM SERVER COUNT [SIZE [STRANGER_SIZE [FLOOD_MS]]]\n");
    return 2;
  }
  std::uint64_t count = std::stoul(argv[3]);
  auto size = static_cast<std::uint32_t>(argc > 4 ? std::stoul(argv[4]) : 100);
  auto stranger_size = static_cast<std::uint32_t>(argc > 5 ? std::stoul(argv[5]) : size);
  std::optional<std::chrono::milliseconds> flood;
  if (argc > 6) flood = std::chrono::milliseconds(std::stoul(argv[6]));
  auto until = fabric::deadline::after(std::chrono::seconds(10));

  fabric::cm_channel ch;
  fabric::addr_query q;
  q.node = argv[2];
  q.service = "7174";
  q.port_space = RDMA_PS_UDP;
  q.qp_type = IBV_QPT_UD;
  auto addrs = fabric::resolve_pair(q, "");
  fabric::cm_id id = ch.create_id(RDMA_PS_UDP);
  fabric::resolve_addr_route(ch, id.get(), addrs.src_addr(), addrs.dst_addr(), fabric::wait_limit::by(until));
  peers::stranger other(id->verbs, argv[1], stranger_size);

  fabric::ud_config cfg;
  cfg.size = size;
  cfg.send_depth = cfg.recv_depth = static_cast<std::uint32_t>(count);
  fabric::ud_endpoint ep(id.get(), cfg);
  fabric::ud_traffic traffic(ep, count, false, "client");
  traffic.post_receives();
  rdma_conn_param param{};
  fabric::check_rc(rdma_connect(id.get(), &param), "rdma_connect");
  auto ev = ch.expect(RDMA_CM_EVENT_ESTABLISHED, until, "SIDR reply");
  fabric::ud_destination server{ep.create_ah(ev.ud().ah_attr), ev.ud().qp_num, ev.ud().qkey};
  ibv_gid server_gid = ev.ud().ah_attr.grh.dgid;
  ev.reset();

  other.send(server_gid, server.qpn, stranger_messages);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  fabric::idle_deadline idle(std::chrono::milliseconds(3000));
  auto sending = flood ? count / 2 : count;
  traffic.send(server, sending, idle);
  traffic.finish_sends(idle);
  if (flood) {
    auto n = other.flood(server_gid, server.qpn, fabric::deadline::after(*flood));
    fmt::print("flooded the server with {} datagrams\n", n);
    return 0;
  }
  traffic.receive_all(idle);
  fmt::print("replies {} of {}\n", traffic.received(), count);
  return traffic.received() == count ? 0 : 1;
} catch (const std::exception& e) {
  fmt::print(stderr, "ud_stranger: {}\n", e.what());
  return 1;
}
