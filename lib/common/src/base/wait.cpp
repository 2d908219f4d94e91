#include "fabric/base/wait.hpp"

#include "fabric/base/error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <vector>
#include <atomic>
#include <iterator>
#include <cerrno>
#include <ctime>
#include <mutex>

namespace fabric {

clock::time_point coarse_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return clock::time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
}

namespace {
std::atomic<bool> g_interrupted{false};
// Why the run stops: interrupted by a signal unless stop() said otherwise.
std::atomic<exit_code> g_stop_code{exit_code::interrupted};
std::atomic<const char*> g_stop_reason{"interrupted"};
int g_pipe[2] = {-1, -1};

void wake_all() noexcept {
  char c = 1;
  // A full pipe already wakes every reader; nothing to do on failure.
  if (g_pipe[1] >= 0) [[maybe_unused]] auto n = ::write(g_pipe[1], &c, 1);
}

extern "C" void on_signal(int) {
  int saved = errno;
  g_interrupted.store(true);
  wake_all();
  errno = saved;
}
}  // namespace

void stop(exit_code code, const char* reason) noexcept {
  if (g_interrupted.exchange(true)) return;  // the first reason stands
  g_stop_code.store(code);
  g_stop_reason.store(reason);
  wake_all();
}

int deadline::poll_timeout() const {
  if (!at_) return -1;
  auto left = *at_ - clock::now();
  if (left <= clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return ms > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(ms);
}

deadline deadline::min(const deadline& other) const {
  if (!at_) return other;
  if (!other.at_) return *this;
  return deadline(std::min(*at_, *other.at_));
}

void install_interrupt_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw_errno(errno, "pipe2");
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: blocking calls must see EINTR
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
  });
}

bool interrupted() noexcept { return g_interrupted.load(); }

void throw_if_interrupted() {
  if (interrupted()) throw error(g_stop_code.load(), g_stop_reason.load());
}

int interrupt_fd() noexcept { return g_pipe[0]; }

namespace {
void drain_self_pipe() noexcept {
  char buf[64];
  while (::read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

/// poll(2) for `events` on `fds` and for input on the self-pipe;
/// `timeout_ms()` gives poll's timeout for each try (tries repeat after EINTR).
template <typename Timeout>
int poll_any(std::span<const int> fds, short events, Timeout timeout_ms) {
  // Most waits are on one or two descriptors (and the self-pipe): those
  // stay on the stack; a host with many devices gets the heap.
  std::array<pollfd, 8> small;
  std::vector<pollfd> large;
  std::span<pollfd> polled(small);
  if (fds.size() + 1 > small.size()) {
    large.resize(fds.size() + 1);
    polled = large;
  }
  for (;;) {
    throw_if_interrupted();
    nfds_t n = 0;
    for (int fd : fds) polled[n++] = {fd, events, 0};
    polled[n++] = {g_pipe[0], POLLIN, 0};
    int rc = ::poll(polled.data(), n, timeout_ms());
    if (rc < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, "poll");
    }
    throw_if_interrupted();
    if (rc == 0) return -1;
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (polled[i].revents != 0) return static_cast<int>(i);
    // The self-pipe readable with no stop asked (a stop is flagged before
    // its byte is written): a stray writer, such as a forked child running
    // foreign code. Drained, or every later wait would wake at once.
    drain_self_pipe();
  }
}
}  // namespace

int wait_any(std::span<const int> fds, const deadline& until) {
  return poll_any(fds, POLLIN, [&] { return until.poll_timeout(); });
}

int wait_any(std::span<const int> fds, std::chrono::milliseconds quiet) {
  auto ms = std::clamp<std::chrono::milliseconds::rep>(quiet.count(), 0, 1'000'000'000);
  return poll_any(fds, POLLIN, [ms] { return static_cast<int>(ms); });
}

bool wait_readable(int fd, const deadline& until) { return wait_any(std::span<const int>(&fd, 1), until) == 0; }

bool wait_writable(int fd, const deadline& until) {
  return poll_any(std::span<const int>(&fd, 1), POLLOUT, [&] { return until.poll_timeout(); }) == 0;
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) throw_errno(errno, "fcntl O_NONBLOCK");
}

}  // namespace fabric
