#pragma once
/// Small helpers for the stream sockets of the ACM client: an owned
/// descriptor, and a connect and a write readiness bounded by a deadline
/// and by Ctrl-C.

#include "fabric/wait.hpp"

#include <sys/socket.h>

#include <utility>

namespace fabric {

/// Owns a descriptor: closes it unless released.
class unique_fd {
public:
  explicit unique_fd(int fd = -1) noexcept : fd_(fd) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd();
  [[nodiscard]] int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }

private:
  int fd_;
};

/// Waits for POLLOUT (or an error) on fd; false when the deadline passed.
/// Throws when interrupted.
bool wait_writable(int fd, const deadline& until);

/// Connects a non-blocking socket within the deadline; returns 0 or an errno.
int connect_bounded(int fd, const sockaddr* sa, socklen_t len, const deadline& until);

/// Clears O_NONBLOCK (receives are then bounded by SO_RCVTIMEO); returns fd.
int make_blocking(int fd);

}  // namespace fabric
