#include "fabric/base/error.hpp"

#include <fmt/format.h>

#include <cstring>

namespace fabric {

std::string_view to_string(exit_code c) noexcept {
  switch (c) {
    case exit_code::ok: return "ok";
    case exit_code::test_failed: return "test_failed";
    case exit_code::usage: return "usage";
    case exit_code::no_device: return "no_device";
    case exit_code::resolve_failed: return "resolve_failed";
    case exit_code::connect_failed: return "connect_failed";
    case exit_code::timeout: return "timeout";
    case exit_code::protocol: return "protocol";
    case exit_code::system: return "system";
    case exit_code::output_closed: return "output_closed";
    case exit_code::interrupted: return "interrupted";
  }
  return "unknown";
}

exit_code classify_errno(int err) noexcept {
  switch (err) {
    case ENODEV:
    case ENXIO:
    case EOPNOTSUPP:
    case EPROTONOSUPPORT:
    case EAFNOSUPPORT:
      return exit_code::no_device;
    case EADDRNOTAVAIL:
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ENODATA:
    case ENOENT:
      return exit_code::resolve_failed;
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case ENOTCONN:
    case EPIPE:
      return exit_code::connect_failed;
    case ETIMEDOUT:
      return exit_code::timeout;
    case EINTR:
      return exit_code::interrupted;
    case EPROTO:
    case EBADMSG:
      return exit_code::protocol;
    case EINVAL:
    case EADDRINUSE:
    default:
      return exit_code::system;
  }
}

void throw_errno(int err, std::string_view what) {
  throw error(classify_errno(err), fmt::format("{}: {}", what, std::strerror(err)));
}

}  // namespace fabric
