#pragma once
/// Host name lookups that end in time. The system resolver alone can wait
/// for minutes on a DNS server that does not answer; every lookup of the
/// toolkit goes through here, with a bound.

#include "fabric/base/handles.hpp"

#include <netdb.h>

#include <chrono>
#include <memory>
#include <string>

namespace fabric {

/// How long a host name's lookup may take unless a tool says otherwise.
inline constexpr std::chrono::milliseconds default_lookup_timeout{10'000};

/// Whether `host` is an IPv4 or IPv6 literal (an IPv6 scope allowed), not
/// a name to look up.
bool is_numeric_address(const std::string& host);

using address_list = std::unique_ptr<addrinfo, release<&::freeaddrinfo>>;

/// getaddrinfo(host, service, hints), a name looked up within `timeout`
/// (an address literal at once). Throws error(timeout) when the system
/// resolver does not answer in time, error(resolve_failed) when it finds
/// nothing. Never empty.
address_list lookup(const std::string& host, const std::string& service, const addrinfo& hints,
                    std::chrono::milliseconds timeout);

/// The numeric address ("10.0.0.1", "fd00::1") of a host name, looked up
/// within `timeout`; a numeric address comes back unchanged. Throws as
/// lookup does. `family`: AF_UNSPEC, AF_INET or AF_INET6.
std::string lookup_host(const std::string& host, int family, std::chrono::milliseconds timeout);

}  // namespace fabric
