#pragma once
/// Errors and the exit-code table shared by every tool.

#include <cerrno>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace fabric {

/// The documented exit codes of every tool (see README and man pages).
enum class exit_code : int {
  ok = 0,                ///< the check passed
  test_failed = 1,       ///< ran to the end, but the result is a failure (loss, mismatch, failed destination)
  usage = 2,             ///< bad command line
  no_device = 3,         ///< no RDMA device, or the device/port cannot serve the request
  resolve_failed = 4,    ///< address, route or name resolution failed
  connect_failed = 5,    ///< the peer rejected, was unreachable, or went away
  timeout = 6,           ///< a bounded wait expired
  protocol = 7,          ///< the peer sent something malformed
  system = 8,            ///< a local resource or system call failed
  output_closed = 9,     ///< stdout went away: the reader of a pipe stopped reading (EPIPE)
  interrupted = 130,     ///< SIGINT or SIGTERM
};

/// Short stable name of an exit code ("timeout", "usage", ...), used in JSON.
std::string_view to_string(exit_code c) noexcept;

/// How a run ended: its exit code and, unless ok, the one-line reason that
/// reaches both the error line on stderr and the JSON `error`.
struct verdict {
  exit_code code = exit_code::ok;
  std::string reason;
  /// The tool's human output has already said it, in the original's own
  /// words: no error line on stderr in human mode (the JSON keeps reason).
  bool told = false;
  [[nodiscard]] bool ok() const noexcept { return code == exit_code::ok; }
};

/// An error that reaches the user as one line and maps to an exit code.
class error : public std::runtime_error {
public:
  error(exit_code code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] exit_code code() const noexcept { return code_; }
  /// Ctrl-C, or standard output gone: the end of the whole run, never one
  /// pair's, connection's or lookup's failure; rethrown by whatever counts
  /// failures item by item.
  [[nodiscard]] bool ends_run() const noexcept {
    return code_ == exit_code::interrupted || code_ == exit_code::output_closed;
  }

private:
  exit_code code_;
};

/// The exit code a failed system or library call with this errno maps to.
exit_code classify_errno(int err) noexcept;

/// Throws an error for `err`, with message "what: strerror(err)".
[[noreturn]] void throw_errno(int err, std::string_view what);

/// rdma_* convention: -1 and errno.
inline void check_rc(int rc, std::string_view what) {
  if (rc != 0) throw_errno(rc == -1 ? errno : (rc < 0 ? -rc : rc), what);
}

/// NULL and errno (ibv_alloc_pd, rdma_create_event_channel, ...).
template <class T>
T* check_ptr(T* p, std::string_view what) {
  if (p == nullptr) throw_errno(errno != 0 ? errno : ENOMEM, what);
  return p;
}

/// errno returned directly (ibv_modify_qp, ibv_post_send, ...).
inline void check_ret(int ret, std::string_view what) {
  if (ret != 0) throw_errno(ret < 0 ? -ret : ret, what);
}

}  // namespace fabric
