// How the ranks agree on the outliers: after the rounds, every rank sends
// rank 0 the round-trip times it measured, and rank 0 answers each with the
// pairs to meet again. One JSON line each way over TCP to --port on rank 0's
// address (the rounds' rdma_cm ports are another port space); every wait
// bounded, every line from a peer read as untrusted.
#include "sweep.hpp"

#include "fabric/socket.hpp"
#include "fabric/wait.hpp"

#include <fmt/format.h>

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

namespace sweep {

using fabric::deadline;
using fabric::exit_code;
using fabric::unique_fd;

namespace {

/// A line of a big fleet's measurements fits well within this.
constexpr std::size_t max_line = std::size_t{1} << 20;
/// Timeouts rank 0 waits for a late rank; a rank waits one more for the answer.
constexpr int wait_timeouts = 4;

std::vector<measurement> measured(const std::vector<pair_result>& mine) {
  std::vector<measurement> out;
  for (const auto& p : mine)
    if (!p.retest && p.ok && p.role == "client" && p.latency)
      out.push_back({{p.server_rank, p.client_rank}, p.latency->p50});
  return out;
}

/// Whether this rank's pair with `peer` passed in the sweep's rounds.
bool met(const std::vector<pair_result>& mine, int peer) {
  return std::any_of(mine.begin(), mine.end(), [&](const pair_result& p) {
    return !p.retest && p.ok && (p.server_rank == peer || p.client_rank == peer);
  });
}

void send_all(int fd, std::string_view text, const deadline& until) {
  while (!text.empty()) {
    auto sent = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      text.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!fabric::wait_writable(fd, until)) throw fabric::error(exit_code::timeout, "the line was not taken in time");
      continue;
    }
    throw fabric::error(exit_code::connect_failed, fmt::format("sending: {}", std::strerror(errno)));
  }
}

/// Reads what is there into `into`; false at end of stream or on an error.
bool read_some(int fd, std::string& into) {
  char buf[4096];
  auto got = ::read(fd, buf, sizeof buf);
  if (got < 0) return errno == EAGAIN || errno == EINTR;
  into.append(buf, static_cast<std::size_t>(got));
  return got > 0;
}

unique_fd listen_on(int port) {
  int last = 0;
  for (int family : {AF_INET6, AF_INET}) {
    unique_fd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      last = errno;
      continue;
    }
    int one = 1, zero = 0;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (family == AF_INET6) {
      ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 peers too
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_any;
      a->sin6_port = htons(static_cast<std::uint16_t>(port));
      len = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_ANY);
      a->sin_port = htons(static_cast<std::uint16_t>(port));
      len = sizeof *a;
    }
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) == 0 && ::listen(fd.get(), SOMAXCONN) == 0) return fd;
    last = errno;
  }
  throw fabric::error(exit_code::system, fmt::format("cannot listen on TCP port {}: {}", port, std::strerror(last)));
}

/// Rank 0: hears every rank of `expected` (others too, if they come in
/// time), names the outliers of its times and theirs, answers everyone heard.
agreement collect(const options& opt, const place& where, int sweep, std::set<int> expected,
                  std::vector<measurement> all) {
  int n = static_cast<int>(where.hosts.size());
  auto until = deadline::after(std::chrono::milliseconds(opt.run.timeout_ms) * wait_timeouts);
  auto listener = listen_on(opt.run.port);

  struct peer {
    unique_fd fd;
    std::string in;
    bool heard = false;
  };
  std::vector<std::unique_ptr<peer>> peers;
  std::set<int> heard;
  while (!expected.empty()) {
    std::vector<int> fds{listener.get()};
    std::vector<peer*> who{nullptr};
    for (auto& p : peers)
      if (p->fd && !p->heard) {
        fds.push_back(p->fd.get());
        who.push_back(p.get());
      }
    int i = fabric::wait_any(fds, until);
    if (i < 0) break;
    if (i == 0) {
      unique_fd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      // A flood of connections gets no more room than every rank four times.
      if (fd && peers.size() < 4 * static_cast<std::size_t>(n)) peers.push_back(std::make_unique<peer>(peer{std::move(fd), {}, false}));
      continue;
    }
    auto& p = *who[static_cast<std::size_t>(i)];
    if (!read_some(p.fd.get(), p.in)) {
      p.fd.reset();
      continue;
    }
    auto nl = p.in.find('\n');
    if (nl == std::string::npos) {
      if (p.in.size() > max_line) p.fd.reset();
      continue;
    }
    auto said = read_measurements(std::string_view(p.in).substr(0, nl), n, sweep);
    if (!said || said->first == 0 || heard.contains(said->first)) {
      p.fd.reset();
      continue;
    }
    heard.insert(said->first);
    expected.erase(said->first);
    all.insert(all.end(), said->second.begin(), said->second.end());
    p.heard = true;
  }
  agreement a;
  a.retest = outliers(all, opt.verdict.outlier_factor, a.fleet);
  a.ranks_heard = static_cast<int>(heard.size()) + 1;
  auto line = agreement_line(a);
  auto answer_by = deadline::after(std::chrono::milliseconds(std::min(opt.run.timeout_ms, 2000)));
  for (auto& p : peers) {
    if (!p->heard || !p->fd) continue;
    try {
      send_all(p->fd.get(), line, answer_by);
    } catch (const fabric::error& e) {
      if (e.code() == exit_code::interrupted) throw;  // one rank's loss is its own
    }
  }
  return a;
}

/// Any other rank: tells rank 0 what it measured and waits for the
/// answer; `patient` as long as rank 0 may take to hear everyone.
agreement ask(const options& opt, const place& where, const std::string& rank0, int sweep,
              const std::vector<measurement>& mine, bool patient) {
  int n = static_cast<int>(where.hosts.size());
  auto until = deadline::after(std::chrono::milliseconds(opt.run.timeout_ms) * (patient ? wait_timeouts + 1 : 1));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  auto port = std::to_string(opt.run.port);
  if (int rc = ::getaddrinfo(rank0.c_str(), port.c_str(), &hints, &found); rc != 0)
    throw fabric::error(exit_code::resolve_failed, fmt::format("{}: {}", rank0, ::gai_strerror(rc)));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, ::freeaddrinfo);

  unique_fd fd;
  for (int err = -1; err != 0;) {
    for (auto* ai = found; ai; ai = ai->ai_next) {
      fd.reset(::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
      if (!fd) continue;
      err = fabric::connect_bounded(fd.get(), ai->ai_addr, ai->ai_addrlen, until);
      if (err == 0) break;
    }
    if (err == 0) break;
    if (until.expired())
      throw fabric::error(exit_code::timeout, fmt::format("rank 0 ({}) did not listen in time", rank0));
    // Rank 0 may still be in its rounds: try again shortly.
    fabric::wait_readable(-1, deadline::after(std::chrono::milliseconds(100)).min(until));
  }
  send_all(fd.get(), measurements_line(where.rank, sweep, mine), until);
  std::string in;
  while (in.find('\n') == std::string::npos) {
    if (in.size() > max_line) throw fabric::error(exit_code::protocol, "rank 0's answer is too long");
    if (!fabric::wait_readable(fd.get(), until)) throw fabric::error(exit_code::timeout, "rank 0 did not answer in time");
    if (!read_some(fd.get(), in)) throw fabric::error(exit_code::connect_failed, "rank 0 closed without an answer");
  }
  auto a = read_agreement(std::string_view(in).substr(0, in.find('\n')), n);
  if (!a) throw fabric::error(exit_code::protocol, "rank 0's answer is not an agreement");
  return *a;
}

}  // namespace

agreement agree_on_outliers(const options& opt, const place& where, const std::vector<std::string>& addrs,
                            int sweep, const std::vector<pair_result>& mine) {
  try {
    if (where.rank != 0)
      // A rank that could not meet rank 0 still tries, but not for long.
      return ask(opt, where, addrs.front(), sweep, measured(mine), met(mine, 0));
    std::set<int> expected;
    for (int r = 1; r < static_cast<int>(where.hosts.size()); ++r)
      if (met(mine, r)) expected.insert(r);
    return collect(opt, where, sweep, std::move(expected), measured(mine));
  } catch (const fabric::error& e) {
    if (e.code() == exit_code::interrupted || e.code() == exit_code::output_closed) throw;
    agreement a;
    a.error = e.what();
    return a;
  }
}

agreement gather_everyone(const options& opt, const place& where, const std::vector<std::string>& addrs, int sweep) {
  try {
    if (where.rank != 0) return ask(opt, where, addrs.front(), sweep, {}, true);
    std::set<int> everyone;
    for (int r = 1; r < static_cast<int>(where.hosts.size()); ++r) everyone.insert(r);
    return collect(opt, where, sweep, std::move(everyone), {});
  } catch (const fabric::error& e) {
    if (e.code() == exit_code::interrupted || e.code() == exit_code::output_closed) throw;
    agreement a;
    a.error = e.what();
    return a;
  }
}

}  // namespace sweep
