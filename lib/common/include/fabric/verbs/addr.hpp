#pragma once
/// Address resolution through rdma_getaddrinfo and address formatting.

#include "fabric/base/handles.hpp"
#include "fabric/base/sockaddr.hpp"

#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <string>

namespace fabric {

/// How long a host name's lookup may take unless a tool says otherwise.
inline constexpr std::chrono::milliseconds default_lookup_timeout{10'000};

/// Whether `host` is an IPv4 or IPv6 literal (an IPv6 scope allowed), not
/// a name to look up.
bool is_numeric_address(const std::string& host);

/// The numeric address ("10.0.0.1", "fd00::1") of a host name, looked up
/// within `timeout`; a numeric address comes back unchanged. Throws
/// error(timeout) when the system resolver does not answer in time,
/// error(resolve_failed) when it finds nothing. `family`: AF_UNSPEC,
/// AF_INET or AF_INET6.
std::string lookup_host(const std::string& host, int family, std::chrono::milliseconds timeout);

/// What to resolve: host and port (either may be empty) and hints.
struct addr_query {
  std::string node;               ///< host name, IPv4/IPv6 literal, or empty
  std::string service;            ///< port number, or empty
  int flags = 0;                  ///< RAI_PASSIVE, RAI_NUMERICHOST, RAI_FAMILY, ...
  int family = AF_UNSPEC;         ///< AF_INET, AF_INET6, AF_IB
  int port_space = RDMA_PS_TCP;   ///< RDMA_PS_TCP, RDMA_PS_UDP, RDMA_PS_IPOIB, RDMA_PS_IB
  int qp_type = IBV_QPT_RC;
  /// Bound on looking up a host name (DNS can hang far longer when down).
  std::chrono::milliseconds lookup_timeout = default_lookup_timeout;
};

/// Resolves with rdma_getaddrinfo; throws error(resolve_failed) naming the
/// address and the reason.
addrinfo_ptr resolve(const addr_query& q);

/// A source and a destination resolved together, as rdma-core's tools do
/// (the source is resolved passively, then used as the hint's source).
struct resolved_pair {
  addrinfo_ptr src;   ///< may be empty when no source was given
  addrinfo_ptr dst;
  [[nodiscard]] sockaddr* src_addr() const;   ///< nullptr when none
  [[nodiscard]] sockaddr* dst_addr() const;
};

/// Resolves `dst` (with `src` as the local address when non-empty).
resolved_pair resolve_pair(const addr_query& dst, const std::string& src);

/// "10.0.0.1", "fd00::1", or a GID for AF_IB; the port is not included.
std::string format_addr(const sockaddr* sa);

/// The port of an AF_INET/AF_INET6/AF_IB address, host order.
std::uint16_t sockaddr_port(const sockaddr* sa) noexcept;

/// Sets the port of an AF_INET/AF_INET6/AF_IB address (host order).
void set_sockaddr_port(sockaddr* sa, std::uint16_t port) noexcept;

/// Resolves a host name or address with getaddrinfo (no RDMA involved), as
/// rdma-core's mckey does for -m and -b, a name within `timeout`; throws
/// error(resolve_failed) or error(timeout).
sockaddr_storage resolve_ip(const std::string& host, std::chrono::milliseconds timeout = default_lookup_timeout);

/// Formats a GID as rdma-core does ("fe80:0000:...").
std::string format_gid(const ibv_gid& gid);

}  // namespace fabric
