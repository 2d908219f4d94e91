#include "fabric/base/socket.hpp"

#include "fabric/base/error.hpp"
#include "fabric/base/lookup.hpp"
#include "fabric/base/meet.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace fabric {

unique_fd::~unique_fd() { reset(); }

void unique_fd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

int connect_bounded(int fd, const sockaddr* sa, socklen_t len, const deadline& until) {
  for (;;) {
    if (::connect(fd, sa, len) == 0) return 0;
    if (errno == EAGAIN && sa->sa_family == AF_UNIX) {
      // The listener's backlog is full. Nothing is in progress (a unix
      // socket does not queue the attempt), so try again shortly.
      if (until.expired()) return EAGAIN;
      wait_readable(-1, deadline::after(redial_interval).min(until));
      continue;
    }
    if (errno != EINPROGRESS) return errno;
    break;
  }
  if (!wait_writable(fd, until)) return ETIMEDOUT;
  int err = 0;
  socklen_t err_len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) return errno;
  return err;
}

namespace {

/// An address as /proc/net/tcp{,6} prints it: the raw 32-bit words of the
/// address in hex (in host order, as the kernel prints them), then the port.
std::string proc_net_address(const sockaddr_storage& ss) {
  auto word = [](const void* p) {
    std::uint32_t w;
    std::memcpy(&w, p, sizeof w);
    return fmt::format("{:08X}", w);
  };
  if (ss.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(ss);
    return fmt::format("{}:{:04X}", word(&in.sin_addr), ntohs(in.sin_port));
  }
  const auto& in6 = reinterpret_cast<const sockaddr_in6&>(ss);
  std::string a;
  for (int i = 0; i < 4; ++i) a += word(in6.sin6_addr.s6_addr + 4 * i);
  return fmt::format("{}:{:04X}", a, ntohs(in6.sin6_port));
}

}  // namespace

std::optional<uid_t> socket_peer_uid(int fd) {
  sockaddr_storage mine{}, theirs{};
  socklen_t mine_len = sizeof mine, theirs_len = sizeof theirs;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &mine_len) != 0) return std::nullopt;
  if (mine.ss_family == AF_UNIX) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
    return cred.uid;
  }
  if (mine.ss_family != AF_INET && mine.ss_family != AF_INET6) return std::nullopt;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&theirs), &theirs_len) != 0) return std::nullopt;
  // The peer's socket is the one whose local end is our remote end and
  // whose remote end is ours.
  std::string local = proc_net_address(theirs), remote = proc_net_address(mine);
  std::ifstream table(mine.ss_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6");
  std::string line;
  std::getline(table, line);  // the heading
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, loc, rem, state, queues, timer, retransmits;
    uid_t uid = 0;
    if (!(fields >> slot >> loc >> rem >> state >> queues >> timer >> retransmits >> uid)) continue;
    if (loc == local && rem == remote) return uid;
  }
  return std::nullopt;
}

int make_blocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

unique_fd listen_tcp(std::uint16_t port) {
  int last = 0;
  for (int family : {AF_INET6, AF_INET}) {
    unique_fd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      last = errno;
      continue;
    }
    int one = 1, zero = 0;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (family == AF_INET6) {
      ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 peers too
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_any;
      a->sin6_port = htons(port);
      len = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_ANY);
      a->sin_port = htons(port);
      len = sizeof *a;
    }
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) == 0 && ::listen(fd.get(), SOMAXCONN) == 0) return fd;
    last = errno;
  }
  throw error(exit_code::system, fmt::format("cannot listen on TCP port {}: {}", port, std::strerror(last)));
}

namespace {

/// The TCP addresses of `host`, looked up within what is left of `until`.
address_list stream_addresses(const std::string& host, std::uint16_t port, const deadline& until) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int ms = until.poll_timeout();
  return lookup(host, std::to_string(port), hints, ms < 0 ? default_lookup_timeout : std::chrono::milliseconds(ms));
}

/// One try at each of `found`, in order, until one connects: 0 with the
/// connection in `out`, or the errno of the last try (ECONNREFUSED when
/// there was none).
int connect_any(const addrinfo* found, const deadline& until, unique_fd& out) {
  int err = ECONNREFUSED;
  for (const auto* ai = found; ai; ai = ai->ai_next) {
    unique_fd fd(::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      err = errno;
      continue;
    }
    err = connect_bounded(fd.get(), ai->ai_addr, ai->ai_addrlen, until);
    if (err == 0) {
      out = std::move(fd);
      return 0;
    }
  }
  return err;
}

/// One try at each of `found`, in order.
unique_fd connect_first(const addrinfo* found, const std::string& host, std::uint16_t port, const deadline& until) {
  unique_fd fd;
  int err = connect_any(found, until, fd);
  if (err == 0) return fd;
  if (err == ETIMEDOUT) throw error(exit_code::timeout, fmt::format("{} port {}: no answer in time", host, port));
  throw error(exit_code::connect_failed, fmt::format("{} port {}: {}", host, port, std::strerror(err)));
}

}  // namespace

unique_fd dial_tcp(const std::string& host, std::uint16_t port, const deadline& until) {
  auto found = stream_addresses(host, port, until);
  return dial_until_listening(until, [&] { return connect_first(found.get(), host, port, until); });
}

dial_answer probe_tcp(const std::string& host, std::uint16_t port, const deadline& until, unique_fd* connection) {
  address_list found;
  try {
    found = stream_addresses(host, port, until);
  } catch (const error& e) {
    if (e.ends_run()) throw;   // Ctrl-C while looking the name up
    return dial_answer::none;  // the name does not resolve
  }
  unique_fd fd;
  int err = connect_any(found.get(), until, fd);
  if (err == 0 && connection) *connection = std::move(fd);
  return err == 0 ? dial_answer::listening : err == ECONNREFUSED ? dial_answer::refused : dial_answer::none;
}

void send_all(int fd, std::string_view text, const deadline& until) {
  while (!text.empty()) {
    auto sent = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      text.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_writable(fd, until)) throw error(exit_code::timeout, "the peer did not take the line in time");
      continue;
    }
    throw error(exit_code::connect_failed, fmt::format("sending: {}", std::strerror(errno)));
  }
}

bool read_some(int fd, std::string& into) {
  char buf[4096];
  auto got = ::read(fd, buf, sizeof buf);
  if (got < 0) return errno == EAGAIN || errno == EINTR;
  into.append(buf, static_cast<std::size_t>(got));
  return got > 0;
}

std::string read_line(int fd, std::string& into, std::size_t max, const deadline& until) {
  for (;;) {
    if (auto nl = into.find('\n'); nl != std::string::npos) {
      if (nl > max) break;
      std::string line = into.substr(0, nl);
      into.erase(0, nl + 1);
      return line;
    }
    if (into.size() > max) break;
    if (!wait_readable(fd, until)) throw error(exit_code::timeout, "no line from the peer in time");
    if (!read_some(fd, into)) throw error(exit_code::connect_failed, "the peer closed the connection before its line");
  }
  throw error(exit_code::protocol, fmt::format("the peer's line is longer than {} bytes", max));
}

}  // namespace fabric
