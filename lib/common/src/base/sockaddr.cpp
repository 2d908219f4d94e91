#include "fabric/base/sockaddr.hpp"

#include <arpa/inet.h>
#include <endian.h>
#include <fmt/format.h>
#include <ifaddrs.h>

#include <memory>

namespace fabric {

std::string format_gid(std::span<const std::uint8_t, 16> gid) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.data(), buf, sizeof buf);
  return buf;
}

std::string format_addr(const sockaddr* sa) {
  if (!sa) return "(none)";
  char buf[INET6_ADDRSTRLEN] = {};
  switch (sa->sa_family) {
    case AF_INET:
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
      return buf;
    case AF_INET6:
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf);
      return buf;
    case AF_IB:
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_ib*>(sa)->sib_addr, buf, sizeof buf);
      return buf;
    default:
      return fmt::format("(family {})", sa->sa_family);
  }
}

std::uint16_t sockaddr_port(const sockaddr* sa) noexcept {
  switch (sa->sa_family) {
    case AF_INET: return ntohs(reinterpret_cast<const sockaddr_in*>(sa)->sin_port);
    case AF_INET6: return ntohs(reinterpret_cast<const sockaddr_in6*>(sa)->sin6_port);
    case AF_IB: return static_cast<std::uint16_t>(be64toh(reinterpret_cast<const sockaddr_ib*>(sa)->sib_sid) & 0xffff);
    default: return 0;
  }
}

void set_sockaddr_port(sockaddr* sa, std::uint16_t port) noexcept {
  switch (sa->sa_family) {
    case AF_INET: reinterpret_cast<sockaddr_in*>(sa)->sin_port = htons(port); break;
    case AF_INET6: reinterpret_cast<sockaddr_in6*>(sa)->sin6_port = htons(port); break;
    case AF_IB: {
      auto* sib = reinterpret_cast<sockaddr_ib*>(sa);
      sib->sib_sid = htobe64((be64toh(sib->sib_sid) & ~0xffffULL) | port);
      sib->sib_sid_mask = htobe64(~0ULL);
      break;
    }
    default: break;
  }
}

std::string interface_address(const std::string& netdev) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owned(list, freeifaddrs);
  std::string v6;
  for (auto* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || netdev != a->ifa_name) continue;
    if (a->ifa_addr->sa_family == AF_INET) return format_addr(a->ifa_addr);
    if (a->ifa_addr->sa_family == AF_INET6 && v6.empty() &&
        !IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr))
      v6 = format_addr(a->ifa_addr);
  }
  return v6;
}

}  // namespace fabric
