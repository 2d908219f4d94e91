#include "fabric/base/wait.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <thread>
#include <vector>

namespace {
using namespace std::chrono_literals;

struct pipe_pair {
  std::array<int, 2> fd{-1, -1};
  pipe_pair() { EXPECT_EQ(::pipe(fd.data()), 0); }
  ~pipe_pair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  void make_readable() { EXPECT_EQ(::write(fd[1], "x", 1), 1); }
};
}  // namespace

TEST(wait, a_quiet_period_ends_the_wait_after_it_has_passed) {
  pipe_pair a, b;
  std::array<int, 2> fds{a.fd[0], b.fd[0]};
  auto t0 = fabric::clock::now();
  EXPECT_EQ(fabric::wait_any(fds, 30ms), -1);
  EXPECT_GE(fabric::clock::now() - t0, 30ms);
  EXPECT_EQ(fabric::wait_any(fds, 0ms), -1);
}

TEST(wait, the_readable_descriptor_is_named_by_its_index) {
  pipe_pair a, b;
  std::array<int, 2> fds{a.fd[0], b.fd[0]};
  b.make_readable();
  EXPECT_EQ(fabric::wait_any(fds, 10'000ms), 1);
  EXPECT_EQ(fabric::wait_any(fds, fabric::deadline::after(10'000ms)), 1);
  a.make_readable();
  EXPECT_EQ(fabric::wait_any(fds, 10'000ms), 0);
}

TEST(wait, a_passed_deadline_does_not_block) {
  pipe_pair a;
  EXPECT_FALSE(fabric::wait_readable(a.fd[0], fabric::deadline::after(0ms)));
  EXPECT_TRUE(fabric::deadline::after(0ms).expired());
  EXPECT_EQ(fabric::deadline::never().poll_timeout(), -1);
}

TEST(wait, a_deadline_at_a_time_read_already_counts_from_it) {
  auto now = fabric::clock::now();
  EXPECT_TRUE(fabric::deadline::at(now - 1ms).expired());
  auto later = fabric::deadline::at(now + 1h);
  EXPECT_FALSE(later.expired());
  EXPECT_GT(later.poll_timeout(), 3'500'000);
  EXPECT_LE(later.poll_timeout(), 3'600'000);
}

TEST(wait, spans_are_counted_in_the_reports_units) {
  auto from = fabric::clock::now();
  auto to = from + std::chrono::microseconds(2500);
  EXPECT_DOUBLE_EQ(fabric::us_between(from, to), 2500.0);
  EXPECT_DOUBLE_EQ(fabric::ms_between(from, to), 2.5);
  EXPECT_DOUBLE_EQ(fabric::ms_between(to, from), -2.5);
  EXPECT_GE(fabric::us_since(from), 0.0);
  EXPECT_GE(fabric::ms_since(from), 0.0);
}

TEST(wait, the_coarse_clock_is_the_deadlines_clock_at_a_ticks_resolution) {
  auto before = fabric::clock::now();
  auto coarse = fabric::coarse_now();
  auto after = fabric::clock::now();
  EXPECT_LE(coarse, after);
  // A tick is at most 10 ms; another epoch would be hours or years off.
  EXPECT_GT(coarse, before - std::chrono::seconds(1));
}

TEST(wait, any_number_of_descriptors) {
  // A host with many RDMA devices waits on one channel each.
  std::vector<int> fds;
  std::vector<std::array<int, 2>> pipes(20);
  for (auto& p : pipes) {
    ASSERT_EQ(::pipe(p.data()), 0);
    fds.push_back(p[0]);
  }
  ASSERT_EQ(::write(pipes[17][1], "x", 1), 1);
  EXPECT_EQ(fabric::wait_any(fds, fabric::deadline::after(std::chrono::milliseconds(1000))), 17);
  for (auto& p : pipes) {
    ::close(p[0]);
    ::close(p[1]);
  }
}

namespace {
/// The write end of the self-pipe, found as any code in the process could
/// find it: the descriptor open for writing on the same pipe.
int self_pipe_writer() {
  struct stat read_end {};
  if (::fstat(fabric::interrupt_fd(), &read_end) != 0) return -1;
  for (int fd = 3; fd < 1024; ++fd) {
    struct stat st {};
    if (fd == fabric::interrupt_fd() || ::fstat(fd, &st) != 0) continue;
    if (st.st_ino == read_end.st_ino && st.st_dev == read_end.st_dev && (::fcntl(fd, F_GETFL) & O_ACCMODE) == O_WRONLY)
      return fd;
  }
  return -1;
}
}  // namespace

TEST(wait, a_stray_byte_on_the_self_pipe_neither_ends_a_wait_nor_keeps_it_spinning) {
  // What a forked child running foreign code (an ibacm provider) can do.
  fabric::install_interrupt_handler();
  int writer = self_pipe_writer();
  ASSERT_GE(writer, 0);
  // In a child, bounded by the parent: a wait that spins would never end.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    pipe_pair quiet;
    bool ok = ::write(writer, "x", 1) == 1 &&
              fabric::wait_any(std::array<int, 1>{quiet.fd[0]}, fabric::deadline::after(50ms)) == -1 &&
              !fabric::wait_readable(quiet.fd[0], fabric::deadline::after(50ms)) &&
              fabric::wait_writable(quiet.fd[1], fabric::deadline::after(5000ms)) && !fabric::interrupted();
    ::_exit(ok ? 0 : 1);
  }
  int status = -1;
  bool ended = false;
  for (int i = 0; i < 500 && !(ended = ::waitpid(pid, &status, WNOHANG) == pid); ++i)
    std::this_thread::sleep_for(10ms);
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "the wait did not end within 5 s";
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
