#pragma once
/// Multicast groups over rdma_cm: joining (full member or send-only), what
/// the MULTICAST_JOIN event says about the group, and the checks for
/// requests only an InfiniBand port can serve.

#include "fabric/cm/cm.hpp"
#include "fabric/base/handles.hpp"
#include "fabric/cm/ud.hpp"

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabric {

/// How to join a group.
enum class join_mode {
  full_member,         ///< send and receive (RDMA_MC_JOIN_FLAG_FULLMEMBER)
  send_only_full_member,  ///< send only, no receive tree (RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
};

/// Starts joining `group` on `id` (rdma_join_multicast_ex); the result comes
/// as RDMA_CM_EVENT_MULTICAST_JOIN on the id's channel. The returned
/// membership leaves the group when destroyed.
multicast_membership join_multicast(rdma_cm_id* id, const sockaddr* group, join_mode mode, void* context = nullptr);

/// What a MULTICAST_JOIN event says about the group.
struct multicast_group {
  ibv_ah_attr ah_attr{};     ///< address vector of the group
  std::uint32_t qpn = 0;     ///< the multicast QPN (0xffffff)
  std::uint32_t qkey = 0;    ///< the group's Q_Key
  std::string dgid;          ///< the group's GID as text ("::ffff:239.1.1.1" on RoCE)
  std::uint16_t mlid = 0;    ///< multicast LID (0 on RoCE)
  std::uint8_t sl = 0;       ///< service level
};

/// Reads a MULTICAST_JOIN event.
multicast_group joined_group(const cm_event& ev);

/// A UD destination for sending to a joined group.
ud_destination group_destination(const ud_endpoint& ep, const multicast_group& group);

/// True for 0.0.0.0, :: and an all-zero AF_IB address: the address that
/// asks the subnet administrator to assign a group.
bool is_unspecified_group(const sockaddr* group) noexcept;

/// The error for a group request that needs InfiniBand (an AF_IB unmapped
/// MGID, or an SA-assigned group) when `ports` has no InfiniBand port, or
/// nothing: "-M ff0e::1: ... needs an InfiniBand port; rxe0 port 1 is Ethernet".
std::optional<std::string> infiniband_only_problem(std::string_view request, const std::vector<port_info>& ports);

}  // namespace fabric
