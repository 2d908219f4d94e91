#include "fabric/socket.hpp"

#include "fabric/error.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace fabric {

unique_fd::~unique_fd() { reset(); }

void unique_fd::reset(int fd) noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

bool wait_writable(int fd, const deadline& until) {
  for (;;) {
    throw_if_interrupted();
    pollfd p[2] = {{fd, POLLOUT, 0}, {interrupt_fd(), POLLIN, 0}};
    int rc = ::poll(p, 2, until.poll_timeout());
    if (rc < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, "poll");
    }
    throw_if_interrupted();
    return rc > 0;
  }
}

int connect_bounded(int fd, const sockaddr* sa, socklen_t len, const deadline& until) {
  for (;;) {
    if (::connect(fd, sa, len) == 0) return 0;
    if (errno == EAGAIN && sa->sa_family == AF_UNIX) {
      // The listener's backlog is full. Nothing is in progress (a unix
      // socket does not queue the attempt), so try again shortly.
      if (until.expired()) return EAGAIN;
      wait_readable(-1, deadline::after(std::chrono::milliseconds(10)).min(until));
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

}  // namespace fabric
