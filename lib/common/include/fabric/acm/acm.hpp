#pragma once
/// A client of the ibacm service over its unix socket or TCP, with every
/// wait bounded and every reply checked (see acm_codec.hpp).

#include "fabric/acm/acm_codec.hpp"
#include "fabric/base/error.hpp"
#include "fabric/base/wait.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabric::acm {

/// Where rdma-core's ibacm listens by default.
inline constexpr std::string_view default_unix_path = "/run/ibacm-unix.sock";
/// The file in which ibacm writes its TCP port.
inline constexpr std::string_view default_port_file = "/run/ibacm-tcp.port";
inline constexpr std::uint16_t default_tcp_port = 6125;

/// The TCP port the service announces in `port_file`, or 6125 when the
/// file is absent or unreadable (as libibacm does).
std::uint16_t service_port(const std::string& port_file = std::string(default_port_file));

/// A failure to reach the service; `err` is the errno behind it (for the
/// original's "unable to contact service: <strerror>").
class connect_error : public error {
public:
  connect_error(int err, const std::string& what) : error(classify_errno(err) == exit_code::timeout ? exit_code::timeout : exit_code::connect_failed, what), err_(err) {}
  connect_error(exit_code code, int err, const std::string& what) : error(code, what), err_(err) {}
  [[nodiscard]] int err() const noexcept { return err_; }

private:
  int err_;
};

/// One connection to an ibacm service; requests are sent one at a time and
/// each reply must match its request's transaction id.
class client {
public:
  /// Connects to `service`: a unix socket path when it starts with '/',
  /// otherwise a host name or address reached over TCP on `port`. Throws
  /// connect_error. Any local user can bind the service's socket path or
  /// port first, so the process answering, when this host can tell who it
  /// is (a unix socket, or TCP within this host), must run as root, as the
  /// user running this, or as `also_trusted`: anyone else is refused
  /// (connect_error with EACCES).
  static client connect(const std::string& service, std::uint16_t port, const deadline& until,
                        std::optional<uid_t> also_trusted = std::nullopt);

  client(client&& o) noexcept;
  client& operator=(client&& o) noexcept;
  client(const client&) = delete;
  client& operator=(const client&) = delete;
  ~client();

  /// RESOLVE: a destination (and optional source) address or name, or a path.
  resolve_reply resolve(std::span<const endpoint> entries, const deadline& until);
  /// PERF_QUERY of all counters (0) or endpoint `index`.
  perf_reply query_perf(std::uint8_t index, const deadline& until);
  /// PERF_QUERY of the endpoint that owns `source`.
  perf_reply query_perf(const endpoint& source, const deadline& until);
  /// EP_QUERY of endpoint `index` on `port`.
  ep_reply query_ep(std::uint8_t index, std::uint8_t port, const deadline& until);

  [[nodiscard]] int fd() const noexcept { return fd_; }

private:
  explicit client(int fd) noexcept : fd_(fd) {}
  std::vector<std::uint8_t> exchange(const std::vector<std::uint8_t>& request, opcode op, const deadline& until);
  int fd_ = -1;
  std::uint64_t next_tid_ = 1;
  void set_receive_timeout(const deadline& until);
  std::vector<std::uint8_t> buffer_;  ///< reused for every reply
  int rcv_timeout_ms_ = -1;           ///< SO_RCVTIMEO in force
};

}  // namespace fabric::acm
