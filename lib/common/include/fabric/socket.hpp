#pragma once
/// Small helpers for the stream sockets of the ACM client: an owned
/// descriptor, and a connect and a write readiness bounded by a deadline
/// and by Ctrl-C.

#include "fabric/wait.hpp"

#include <sys/socket.h>
#include <sys/types.h>

#include <optional>

#include <utility>

namespace fabric {

/// Owns a descriptor: closes it unless released.
class unique_fd {
public:
  explicit unique_fd(int fd = -1) noexcept : fd_(fd) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  unique_fd(unique_fd&& other) noexcept : fd_(other.release()) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    reset(other.release());
    return *this;
  }
  ~unique_fd();
  [[nodiscard]] int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int release() noexcept { return std::exchange(fd_, -1); }
  /// Closes the descriptor held, if any, and holds `fd`.
  void reset(int fd = -1) noexcept;

private:
  int fd_;
};

/// Waits for POLLOUT (or an error) on fd; false when the deadline passed.
/// Throws when interrupted.
bool wait_writable(int fd, const deadline& until);

/// Connects a non-blocking socket within the deadline; returns 0 or an
/// errno (EAGAIN: a unix listener's backlog stayed full until the deadline).
int connect_bounded(int fd, const sockaddr* sa, socklen_t len, const deadline& until);

/// The uid owning the other end of a connected stream socket, when this
/// host holds that end: the peer's credentials on a unix socket, the
/// owner of the matching TCP socket in /proc/net/tcp{,6} for a connection
/// within this host. Empty for a peer elsewhere.
std::optional<uid_t> socket_peer_uid(int fd);

/// Clears O_NONBLOCK (receives are then bounded by SO_RCVTIMEO); returns fd.
int make_blocking(int fd);

}  // namespace fabric
