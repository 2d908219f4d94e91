#pragma once
/// Address resolution through rdma_getaddrinfo (host names looked up first,
/// within a bound: base/lookup.hpp).

#include "fabric/base/handles.hpp"
#include "fabric/base/lookup.hpp"
#include "fabric/base/sockaddr.hpp"

#include <sys/socket.h>

#include <chrono>
#include <optional>
#include <string>

namespace fabric {

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

/// Resolves a host name or address with getaddrinfo (no RDMA involved), as
/// rdma-core's mckey does for -m and -b, a name within `timeout`; throws
/// error(resolve_failed) or error(timeout).
sockaddr_storage resolve_ip(const std::string& host, std::chrono::milliseconds timeout = default_lookup_timeout);

}  // namespace fabric
