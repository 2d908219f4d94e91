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
  return copy_sockaddr(lookup(host, {}, addrinfo{}, timeout)->ai_addr);
}

}  // namespace fabric
