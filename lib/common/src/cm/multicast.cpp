#include "fabric/cm/multicast.hpp"

#include "fabric/verbs/addr.hpp"

#include <fmt/format.h>
#include <infiniband/ib.h>
#include <netinet/in.h>

#include <algorithm>
#include <memory>

namespace fabric {

multicast_membership join_multicast(rdma_cm_id* id, const sockaddr* group, join_mode mode, void* context) {
  auto storage = copy_sockaddr(group);
  rdma_cm_join_mc_attr_ex attr{};
  attr.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
  attr.join_flags = mode == join_mode::full_member ? RDMA_MC_JOIN_FLAG_FULLMEMBER : RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
  attr.addr = reinterpret_cast<sockaddr*>(&storage);
  check_rc(rdma_join_multicast_ex(id, &attr, context), fmt::format("rdma_join_multicast {}", format_addr(group)));
  return multicast_membership(id, group);
}

multicast_group joined_group(const cm_event& ev) {
  const auto& ud = ev.ud();
  multicast_group g;
  g.ah_attr = ud.ah_attr;
  g.qpn = ud.qp_num;
  g.qkey = ud.qkey;
  g.dgid = format_gid(ud.ah_attr.grh.dgid.raw);
  g.mlid = ud.ah_attr.dlid;
  g.sl = ud.ah_attr.sl;
  return g;
}

ud_destination group_destination(const ud_endpoint& ep, const multicast_group& group) {
  ud_destination d;
  d.ah = ep.create_ah(group.ah_attr);
  d.qpn = group.qpn;
  d.qkey = group.qkey;
  return d;
}

bool is_unspecified_group(const sockaddr* group) noexcept {
  switch (group->sa_family) {
    case AF_INET: return reinterpret_cast<const sockaddr_in*>(group)->sin_addr.s_addr == INADDR_ANY;
    case AF_INET6: return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(group)->sin6_addr);
    case AF_IB: {
      const auto& raw = reinterpret_cast<const sockaddr_ib*>(group)->sib_addr.sib_raw;
      return std::all_of(std::begin(raw), std::end(raw), [](std::uint8_t b) { return b == 0; });
    }
    default: return false;
  }
}

std::optional<std::string> infiniband_only_problem(std::string_view request, const std::vector<port_info>& ports) {
  std::string seen;
  for (const auto& p : ports) {
    // IBV_LINK_LAYER_UNSPECIFIED is what older InfiniBand drivers report.
    if (p.link_layer == IBV_LINK_LAYER_INFINIBAND || p.link_layer == IBV_LINK_LAYER_UNSPECIFIED) return std::nullopt;
    seen += fmt::format("{}{} port {} is {}", seen.empty() ? "" : ", ", p.device, p.port, link_layer_name(p.link_layer));
  }
  if (seen.empty()) seen = "no RDMA port found";
  return fmt::format("{} needs an InfiniBand port; {}", request, seen);
}

}  // namespace fabric
