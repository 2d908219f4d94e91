#include "fabric/verbs/addr.hpp"

#include "fabric/base/text.hpp"
#include "fabric/base/error.hpp"
#include "fabric/base/wait.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <infiniband/ib.h>
#include <netdb.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <memory>

namespace fabric {

bool is_numeric_address(const std::string& host) {
  std::string bare = host.substr(0, host.find('%'));  // an IPv6 scope
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, bare.c_str(), buf) == 1 || inet_pton(AF_INET6, bare.c_str(), buf) == 1;
}

namespace {
std::string describe(const addr_query& q) {
  if (q.node.empty()) return q.service.empty() ? std::string("(any)") : fmt::format("port {}", q.service);
  return printable(q.node);
}


rdma_addrinfo make_hints(const addr_query& q) {
  rdma_addrinfo hints{};
  hints.ai_flags = q.flags;
  hints.ai_family = q.family;
  hints.ai_port_space = q.port_space;
  hints.ai_qp_type = q.qp_type;
  return hints;
}

addrinfo_ptr getaddrinfo_or_throw(const addr_query& q, rdma_addrinfo hints) {
  // A host name is looked up first, within its bound, so that
  // rdma_getaddrinfo gets an address and never waits on DNS itself.
  std::string node = q.node;
  bool by_name =
      !node.empty() && (hints.ai_flags & RAI_NUMERICHOST) == 0 && q.family != AF_IB && !is_numeric_address(node);
  if (by_name) {
    node = lookup_host(node, q.family, q.lookup_timeout);
    hints.ai_flags |= RAI_NUMERICHOST;
  }
  rdma_addrinfo* res = nullptr;
  int rc = rdma_getaddrinfo(node.empty() ? nullptr : node.c_str(),
                            q.service.empty() ? nullptr : q.service.c_str(), &hints, &res);
  if (rc != 0) {
    // rdma_getaddrinfo returns EAI_* codes, or -1 with errno for its own
    // failures; ENODEV there means this host has no RDMA device at all.
    bool sys = rc == EAI_SYSTEM || rc == -1;
    int err = errno;
    std::string why = sys ? std::strerror(err) : gai_strerror(rc);
    throw error(sys && err == ENODEV ? exit_code::no_device : exit_code::resolve_failed,
                fmt::format("rdma_getaddrinfo {}: {}", describe(q), why));
  }
  return addrinfo_ptr(res);
}
}  // namespace

addrinfo_ptr resolve(const addr_query& q) { return getaddrinfo_or_throw(q, make_hints(q)); }

namespace {

/// One asynchronous lookup. On a timeout the resolver's thread may still
/// hold it, so it is then left to the process rather than freed under it.
struct pending_lookup {
  std::string name;
  addrinfo hints{};
  gaicb cb{};
};

}  // namespace

std::string lookup_host(const std::string& host, int family, std::chrono::milliseconds timeout) {
  if (is_numeric_address(host)) return host;
  auto req = std::make_unique<pending_lookup>();
  req->name = host;
  req->hints.ai_family = family;
  req->hints.ai_socktype = SOCK_STREAM;
  req->cb.ar_name = req->name.c_str();
  req->cb.ar_request = &req->hints;
  gaicb* list[1] = {&req->cb};
  int rc = getaddrinfo_a(GAI_NOWAIT, list, 1, nullptr);
  if (rc != 0) throw error(exit_code::system, fmt::format("getaddrinfo_a {}: {}", printable(host), gai_strerror(rc)));
  auto until = deadline::after(timeout);
  while ((rc = gai_error(&req->cb)) == EAI_INPROGRESS) {
    throw_if_interrupted();
    int ms = until.poll_timeout();
    if (ms == 0) {
      if (gai_cancel(&req->cb) == EAI_NOTCANCELED) (void)req.release();
      throw error(exit_code::timeout, fmt::format("looking up {}: no answer from the system resolver within {} ms",
                                                  printable(host), timeout.count()));
    }
    // Short slices, so that a signal is seen soon whatever gai_suspend does with it.
    timespec ts{0, static_cast<long>(std::min(ms, 50)) * 1'000'000L};
    gai_suspend(list, 1, &ts);
  }
  if (rc != 0)
    throw error(exit_code::resolve_failed,
                fmt::format("looking up {}: {}", printable(host), rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc)));
  std::unique_ptr<addrinfo, release<&::freeaddrinfo>> result(req->cb.ar_result);
  if (!result || !result->ai_addr) throw error(exit_code::resolve_failed, fmt::format("looking up {}: no address", printable(host)));
  return format_addr(result->ai_addr);
}

sockaddr* resolved_pair::src_addr() const { return src ? src->ai_src_addr : nullptr; }
sockaddr* resolved_pair::dst_addr() const { return dst->ai_dst_addr; }

resolved_pair resolve_pair(const addr_query& dst, const std::string& src) {
  resolved_pair pair;
  rdma_addrinfo hints = make_hints(dst);
  if (!src.empty()) {
    addr_query sq = dst;
    sq.node = src;
    sq.service.clear();
    sq.flags |= RAI_PASSIVE;
    pair.src = resolve(sq);
    hints.ai_src_addr = pair.src->ai_src_addr;
    hints.ai_src_len = pair.src->ai_src_len;
  }
  pair.dst = getaddrinfo_or_throw(dst, hints);
  return pair;
}

sockaddr_storage resolve_ip(const std::string& host, std::chrono::milliseconds timeout) {
  std::string numeric = lookup_host(host, AF_UNSPEC, timeout);
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(numeric.c_str(), nullptr, &hints, &res);
  if (rc != 0)
    throw error(exit_code::resolve_failed, fmt::format("getaddrinfo {}: {}", printable(host), rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc)));
  std::unique_ptr<addrinfo, release<&::freeaddrinfo>> owner(res);
  return copy_sockaddr(res->ai_addr);
}

std::string format_gid(const ibv_gid& gid) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, buf, sizeof buf);
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

}  // namespace fabric
