// The original's guess of an address's format (-f u).
#include "guess.hpp"

#include "fabric/base/error.hpp"
#include "fabric/base/lookup.hpp"
#include "fabric/base/sockaddr.hpp"

#include <netdb.h>

namespace ib_acme {

std::pair<std::string, char> guess_dest(const std::string& arg, char format) {
  if (format != 'u') return {arg, format};
  if (fabric::is_numeric_address(arg)) return {arg, 'i'};
  addrinfo hint{};
  hint.ai_protocol = IPPROTO_TCP;
  fabric::address_list found;
  try {
    found = fabric::lookup(arg, {}, hint, fabric::default_lookup_timeout);
  } catch (const fabric::error& e) {
    if (e.ends_run()) throw;
    return {arg, 'l'};  // no address (or no answer in time): the original's LID
  }
  return {fabric::format_addr(found->ai_addr), 'i'};
}

}  // namespace ib_acme
