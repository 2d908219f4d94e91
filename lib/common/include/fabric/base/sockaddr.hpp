#pragma once
/// Socket addresses of every family the toolkit speaks (IPv4, IPv6 and
/// InfiniBand's AF_IB), sized and copied by their family: the bottom layer
/// that handles and addressing share.

#include <infiniband/ib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace fabric {

/// Length of a sockaddr by family (AF_INET, AF_INET6, AF_IB; the storage's
/// whole size for any other).
inline socklen_t sockaddr_length(const sockaddr* sa) noexcept {
  switch (sa->sa_family) {
    case AF_INET: return sizeof(sockaddr_in);
    case AF_INET6: return sizeof(sockaddr_in6);
    case AF_IB: return sizeof(sockaddr_ib);
    default: return sizeof(sockaddr_storage);
  }
}

/// Copies a sockaddr into storage (sized by its family); zeros for none.
inline sockaddr_storage copy_sockaddr(const sockaddr* sa) noexcept {
  sockaddr_storage ss{};
  if (sa) std::memcpy(&ss, sa, sockaddr_length(sa));
  return ss;
}

/// "10.0.0.1", "fd00::1", or a GID for AF_IB; the port is not included.
std::string format_addr(const sockaddr* sa);

/// The port of an AF_INET/AF_INET6/AF_IB address, host order.
std::uint16_t sockaddr_port(const sockaddr* sa) noexcept;

/// Sets the port of an AF_INET/AF_INET6/AF_IB address (host order).
void set_sockaddr_port(sockaddr* sa, std::uint16_t port) noexcept;

/// A GID as rdma-core's tools print it: IPv6 text ("fe80::2", "::ffff:10.0.0.1").
std::string format_gid(std::span<const std::uint8_t, 16> gid);

/// The address rdma_cm would reach a network device by ("eth1", "ib0"), as
/// getifaddrs lists it: its IPv4 address, else an IPv6 one that is not
/// link-local (that needs a scope); empty when it has none.
std::string interface_address(const std::string& netdev);

}  // namespace fabric
