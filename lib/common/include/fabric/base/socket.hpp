#pragma once
/// Stream sockets with bounded waits: an owned descriptor, connecting,
/// listening, and whole lines of text each way, every wait bounded by a
/// deadline and by Ctrl-C (the ACM client, the sweep's ranks meeting rank 0).

#include "fabric/base/wait.hpp"

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

/// A non-blocking TCP listener on `port` of every address, IPv6 and IPv4
/// (IPv4 alone where IPv6 is off). Throws error(system) naming the port.
unique_fd listen_tcp(std::uint16_t port);

/// A non-blocking TCP connection to `host` (a name or an address) and
/// `port`, dialled again every redial_interval while it is refused (the
/// listener may start a little later), until `until`. Throws
/// error(resolve_failed), error(timeout), or error(connect_failed).
unique_fd dial_tcp(const std::string& host, std::uint16_t port, const deadline& until);

/// What one dial of `host`:`port` found by `until`: a listener, a refusal
/// (the host answered that nothing listens there), or neither (no answer
/// in time, a host unreachable, a name that does not resolve). A listener's
/// connection goes to `connection` when given, else is closed.
enum class dial_answer { listening, refused, none };
dial_answer probe_tcp(const std::string& host, std::uint16_t port, const deadline& until,
                      unique_fd* connection = nullptr);

/// Sends all of `text` on a non-blocking socket before `until`; throws
/// error(timeout), or error(connect_failed) when the peer went away.
void send_all(int fd, std::string_view text, const deadline& until);

/// Reads what is there into `into`; false at the end of the stream or on
/// an error (a would-block read is true, with nothing added).
bool read_some(int fd, std::string& into);

/// Reads until `into` holds a line feed, at most `max` bytes, before
/// `until`; returns the first line without it (what follows stays in
/// `into`). Throws error(timeout), error(connect_failed) when the stream
/// ended first, error(protocol) when the line is longer than `max`.
std::string read_line(int fd, std::string& into, std::size_t max, const deadline& until);

}  // namespace fabric
