// The original's guess of an address's format (-f u).
#include "guess.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <memory>

namespace ib_acme {

std::pair<std::string, char> guess_dest(const std::string& arg, char format) {
  if (format != 'u') return {arg, format};
  unsigned char buf[16];
  if (inet_pton(AF_INET, arg.c_str(), buf) > 0 || inet_pton(AF_INET6, arg.c_str(), buf) > 0) return {arg, 'i'};
  addrinfo hint{};
  hint.ai_protocol = IPPROTO_TCP;
  addrinfo* res = nullptr;
  if (getaddrinfo(arg.c_str(), nullptr, &hint, &res) != 0) return {arg, 'l'};
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(res, &freeaddrinfo);
  char text[INET6_ADDRSTRLEN] = {};
  const void* a = res->ai_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr)
                                             : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_addr);
  if (inet_ntop(res->ai_family, a, text, sizeof text)) return {text, 'i'};
  return {arg, 'n'};
}

}  // namespace ib_acme
