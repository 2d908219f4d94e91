#include "fabric/socket.hpp"

#include "fabric/error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace fabric {

unique_fd::~unique_fd() {
  if (fd_ >= 0) ::close(fd_);
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
  if (::connect(fd, sa, len) == 0) return 0;
  if (errno != EINPROGRESS && errno != EAGAIN) return errno;
  if (!wait_writable(fd, until)) return ETIMEDOUT;
  int err = 0;
  socklen_t err_len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) return errno;
  return err;
}

int make_blocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace fabric
