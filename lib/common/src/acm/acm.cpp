#include "fabric/acm/acm.hpp"

#include "fabric/base/lookup.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/socket.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <utility>

namespace fabric::acm {


std::uint16_t service_port(const std::string& port_file) {
  std::ifstream in(port_file);
  unsigned port = 0;
  if (in >> port && port > 0 && port <= 0xffff) return static_cast<std::uint16_t>(port);
  return default_tcp_port;
}

namespace {

/// Refuses a service run by someone not trusted to answer for it.
void check_service_user(int fd, const std::string& service, std::optional<uid_t> also_trusted) {
  auto uid = socket_peer_uid(fd);
  if (!uid || *uid == 0 || *uid == ::geteuid() || (also_trusted && *uid == *also_trusted)) return;
  std::string name;
  if (const passwd* pw = ::getpwuid(*uid)) name = fmt::format(" ({})", pw->pw_name);
  throw connect_error(EACCES, fmt::format("{}: the service runs as uid {}{}, not root or this user: not trusted "
                                          "(--service-user trusts a user)", printable(service), *uid, printable(name)));
}

}  // namespace

client client::connect(const std::string& service, std::uint16_t port, const deadline& until,
                       std::optional<uid_t> also_trusted) {
  if (!service.empty() && service.front() == '/') {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (service.size() >= sizeof addr.sun_path)
      throw connect_error(ENAMETOOLONG, fmt::format("{}: {}", printable(service), std::strerror(ENAMETOOLONG)));
    std::memcpy(addr.sun_path, service.data(), service.size());
    unique_fd s{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)};
    if (s.get() < 0) throw_errno(errno, "socket");
    int err = connect_bounded(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr, until);
    if (err == EAGAIN)
      throw connect_error(exit_code::timeout, EAGAIN,
                          fmt::format("connect to {}: the service took no new connection in time "
                                      "(its listen backlog is full)", printable(service)));
    if (err != 0) throw connect_error(err, fmt::format("connect to {}: {}", printable(service), std::strerror(err)));
    check_service_user(s.get(), service, also_trusted);
    return client(make_blocking(s.release()));
  }

  addrinfo hint{};
  hint.ai_family = AF_UNSPEC;
  hint.ai_socktype = SOCK_STREAM;
  hint.ai_protocol = IPPROTO_TCP;
  address_list found;
  try {
    int ms = until.poll_timeout();
    found = lookup(service.empty() ? "localhost" : service, std::to_string(port), hint,
                   ms < 0 ? default_lookup_timeout : std::chrono::milliseconds(ms));
  } catch (const error& e) {
    if (e.ends_run()) throw;
    throw connect_error(e.code() == exit_code::timeout ? ETIMEDOUT : EHOSTUNREACH, e.what());
  }
  int last = ECONNREFUSED;
  for (auto* ai = found.get(); ai; ai = ai->ai_next) {
    unique_fd s{::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol)};
    if (s.get() < 0) {
      last = errno;
      continue;
    }
    last = connect_bounded(s.get(), ai->ai_addr, ai->ai_addrlen, until);
    if (last == 0) {
      check_service_user(s.get(), service, also_trusted);
      int one = 1;
      ::setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return client(make_blocking(s.release()));
    }
  }
  throw connect_error(last, fmt::format("connect to {} port {}: {}", printable(service), port, std::strerror(last)));
}

client::client(client&& o) noexcept : fd_(std::exchange(o.fd_, -1)), next_tid_(o.next_tid_) {}

client& client::operator=(client&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    next_tid_ = o.next_tid_;
  }
  return *this;
}

client::~client() {
  if (fd_ >= 0) {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
  }
}

void client::set_receive_timeout(const deadline& until) {
  int left = until.poll_timeout();
  if (left < 0) left = 0;  // unbounded: SO_RCVTIMEO 0 blocks forever
  else left = std::max(1, left);
  // Rounded up to 10 ms so that back-to-back requests reuse the setting.
  left = (left + 9) / 10 * 10;
  if (left == rcv_timeout_ms_) return;
  timeval tv{left / 1000, (left % 1000) * 1000};
  if (::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0) throw_errno(errno, "setsockopt SO_RCVTIMEO");
  rcv_timeout_ms_ = left;
}

std::vector<std::uint8_t> client::exchange(const std::vector<std::uint8_t>& request, opcode op, const deadline& until) {
  if (fd_ < 0) throw error(exit_code::connect_failed, "not connected to the ACM service");
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) throw_errno(errno, "send to the ACM service");
    if (!wait_writable(fd_, until)) throw error(exit_code::timeout, "the ACM service does not take requests in time");
  }
  // One request, one reply: read what has arrived (up to the largest reply
  // the protocol allows), learn the length from the header, and refuse a
  // length the protocol cannot produce, a reply cut short, or bytes past
  // the end (the service and this client no longer agree on framing).
  auto limit = max_reply_length(op);
  buffer_.resize(limit + 1);
  std::size_t got = 0;
  std::size_t want = header_size;
  while (got < want) {
    // A reply that drips in byte by byte is bounded as a silent one is.
    if (until.expired()) throw error(exit_code::timeout, "no whole reply from the ACM service in time");
    // A blocking recv bounded by SO_RCVTIMEO: one call per reply, as the
    // original makes, where a poll first would double the calls.
    set_receive_timeout(until);
    ssize_t n = ::recv(fd_, buffer_.data() + got, buffer_.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) {
        throw_if_interrupted();
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (until.expired()) throw error(exit_code::timeout, "no reply from the ACM service in time");
        continue;
      }
      throw_errno(errno, "receive from the ACM service");
    }
    if (n == 0) {
      if (got == 0) throw error(exit_code::connect_failed, "ACM service closed the connection");
      throw error(exit_code::protocol, fmt::format("malformed ACM reply: truncated {} ({} of {} bytes)",
                                                   want == header_size ? "header" : "reply", got, want));
    }
    got += static_cast<std::size_t>(n);
    if (want == header_size && got >= header_size) {
      header h = decode_header(buffer_, op);
      if (h.length < header_size || h.length > limit)
        throw error(exit_code::protocol, fmt::format("malformed ACM reply: length field {} outside {}..{}", h.length,
                                                     header_size, limit));
      want = h.length;
    }
  }
  if (got > want) throw error(exit_code::protocol, "malformed ACM reply: more bytes than its length field says");
  return {buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(want)};
}

resolve_reply client::resolve(std::span<const endpoint> entries, const deadline& until) {
  auto tid = next_tid_++;
  auto reply = exchange(encode_resolve(tid, entries), opcode::resolve, until);
  return decode_resolve_reply(reply, tid);
}

perf_reply client::query_perf(std::uint8_t index, const deadline& until) {
  auto tid = next_tid_++;
  return decode_perf_reply(exchange(encode_perf_query(tid, index), opcode::perf_query, until), tid);
}

perf_reply client::query_perf(const endpoint& source, const deadline& until) {
  auto tid = next_tid_++;
  return decode_perf_reply(exchange(encode_perf_query(tid, source), opcode::perf_query, until), tid);
}

ep_reply client::query_ep(std::uint8_t index, std::uint8_t port, const deadline& until) {
  auto tid = next_tid_++;
  return decode_ep_reply(exchange(encode_ep_query(tid, index, port), opcode::ep_query, until), tid);
}

}  // namespace fabric::acm
