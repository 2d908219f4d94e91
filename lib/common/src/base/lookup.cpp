#include "fabric/base/lookup.hpp"

#include "fabric/base/error.hpp"
#include "fabric/base/sockaddr.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace fabric {

bool is_numeric_address(const std::string& host) {
  std::string bare = host.substr(0, host.find('%'));  // an IPv6 scope
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, bare.c_str(), buf) == 1 || inet_pton(AF_INET6, bare.c_str(), buf) == 1;
}

namespace {

/// One asynchronous lookup.
struct pending_lookup {
  std::string name, service;
  addrinfo hints{};
  gaicb cb{};
};

[[noreturn]] void lookup_failed(const std::string& host, int rc) {
  throw error(exit_code::resolve_failed,
              fmt::format("looking up {}: {}", printable(host), rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc)));
}

}  // namespace

address_list lookup(const std::string& host, const std::string& service, const addrinfo& hints,
                    std::chrono::milliseconds timeout) {
  const char* port = service.empty() ? nullptr : service.c_str();
  if (is_numeric_address(host)) {  // nothing to wait for
    addrinfo numeric = hints;
    numeric.ai_flags |= AI_NUMERICHOST;
    addrinfo* found = nullptr;
    if (int rc = ::getaddrinfo(host.c_str(), port, &numeric, &found); rc != 0) lookup_failed(host, rc);
    return address_list(found);
  }
  auto req = std::make_unique<pending_lookup>();
  req->name = host;
  req->service = service;
  req->hints = hints;
  req->cb.ar_name = req->name.c_str();
  req->cb.ar_service = port ? req->service.c_str() : nullptr;
  req->cb.ar_request = &req->hints;
  gaicb* list[1] = {&req->cb};
  int rc = getaddrinfo_a(GAI_NOWAIT, list, 1, nullptr);
  if (rc != 0) throw error(exit_code::system, fmt::format("getaddrinfo_a {}: {}", printable(host), gai_strerror(rc)));
  // A lookup given up on (Ctrl-C, the bound) may still be the resolver
  // thread's: it is then left to the process rather than freed under it.
  auto abandon = [&] {
    if (gai_cancel(&req->cb) == EAI_NOTCANCELED) (void)req.release();
  };
  auto until = deadline::after(timeout);
  while ((rc = gai_error(&req->cb)) == EAI_INPROGRESS) {
    if (interrupted()) {
      abandon();
      throw_if_interrupted();
    }
    int ms = until.poll_timeout();
    if (ms == 0) {
      abandon();
      throw error(exit_code::timeout, fmt::format("looking up {}: no answer from the system resolver within {} ms",
                                                  printable(host), timeout.count()));
    }
    // Short slices, so that a signal is seen soon whatever gai_suspend does with it.
    timespec ts{0, static_cast<long>(std::min(ms, 50)) * 1'000'000L};
    gai_suspend(list, 1, &ts);
  }
  if (rc != 0) lookup_failed(host, rc);
  address_list found(req->cb.ar_result);
  if (!found || !found->ai_addr)
    throw error(exit_code::resolve_failed, fmt::format("looking up {}: no address", printable(host)));
  return found;
}

std::string lookup_host(const std::string& host, int family, std::chrono::milliseconds timeout) {
  if (is_numeric_address(host)) return host;
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  return format_addr(lookup(host, {}, hints, timeout)->ai_addr);
}

}  // namespace fabric
