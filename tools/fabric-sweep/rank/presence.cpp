// Where a rank is in its rounds: its answerer thread, and a waiting
// peer's question.
#include "fabric-sweep/rank/presence.hpp"

#include "fabric/base/error.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>

namespace sweep {

namespace {

constexpr std::string_view word = "fabric-sweep";
/// An answer is a few dozen bytes; more is not one.
constexpr std::size_t max_answer = 64;
/// The longest a question waits for its answer, whatever --timeout says.
constexpr std::chrono::milliseconds max_question{5000};

/// The longest a question of departures waits for its answer; the first
/// to each peer, on a thread of its own, holds up nothing and waits the
/// longest any question does (a rank not yet answering is never judged).
constexpr std::chrono::milliseconds max_departure_question{1000};
/// The longest time between two silent questions of one silence.
constexpr std::chrono::milliseconds max_question_gap{3000};

/// What one question to the rank at `addr`:`port` heard by `until`.
struct reply {
  enum class kind { answered, refused, silent };
  kind heard = kind::silent;
  long step = 0;  ///< where it is, when it answered
};

/// Asks the rank at `addr`:`port` where it is: its step; a refusal
/// (nothing listens there); or silence: no connection or no answer in
/// time (frozen, its host gone), or something else than the answer of
/// `rank` (another program on the port).
reply ask(const std::string& addr, std::uint16_t port, int rank, const fabric::deadline& until) {
  fabric::unique_fd fd;
  // Asked once: a refusal means nobody answers there.
  auto dialled = fabric::probe_tcp(addr, port, until, &fd);
  if (dialled == fabric::dial_answer::refused) return {reply::kind::refused};
  if (dialled != fabric::dial_answer::listening) return {};
  try {
    std::string in;
    if (auto step = read_presence(fabric::read_line(fd.get(), in, max_answer, until), rank))
      return {reply::kind::answered, *step};
  } catch (const fabric::error& e) {
    if (e.ends_run()) throw;
  }
  return {};
}

}  // namespace

std::optional<std::uint16_t> presence_port(int base, int rank) {
  long port = static_cast<long>(base) + 1 + rank;
  if (rank < 0 || port > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(port);
}

std::string presence_line(int rank, long step) { return fmt::format("{} {} {}\n", word, rank, step); }

std::optional<long> read_presence(std::string_view line, int rank) {
  if (!line.starts_with(word) || line.size() < word.size() + 1 || line[word.size()] != ' ') return std::nullopt;
  line.remove_prefix(word.size() + 1);
  auto space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto who = fabric::whole_number<int>(line.substr(0, space));
  if (!who || *who != rank) return std::nullopt;
  return fabric::whole_number<long>(line.substr(space + 1));
}

presence::presence(const run_options& r, int rank) : rank_(rank) {
  auto port = presence_port(r.port, rank);
  if (!port) return;
  try {
    listener_ = fabric::listen_tcp(*port);
  } catch (const fabric::error& e) {
    if (e.ends_run()) throw;
    return;  // another program holds the port: this rank stays silent
  }
  wake_ = fabric::unique_fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_) fabric::throw_errno(errno, "eventfd");
  thread_ = fabric::start_without_signals<std::thread>([this] { answer(); });
}

presence::~presence() {
  if (!thread_.joinable()) return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
  thread_.join();
}

void presence::answer() {
  std::array<pollfd, 2> fds{{{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}}};
  for (;;) {
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if (fds[0].revents == 0) continue;
    // Each asker gets the line at once and the connection closes: a flood
    // of askers costs an accept and a send each, and nothing waits on one.
    fabric::unique_fd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) continue;
    auto line = presence_line(rank_, step_.load(std::memory_order_relaxed));
    [[maybe_unused]] auto sent = ::send(fd.get(), line.data(), line.size(), MSG_NOSIGNAL);
  }
}

struct departures::watch {
  std::mutex lock;
  reply heard;                        ///< what the last question heard
  fabric::clock::time_point heard_at; ///< when it ended
  struct silence {
    fabric::clock::time_point since;  ///< the first silent question's start
    fabric::clock::time_point last;   ///< the last one's end
    int questions = 0;
  };
  std::optional<silence> silent;      ///< its silence now, if it is silent
};

departures::departures(const run_options& r, const std::vector<std::string>& addrs, int rank, std::vector<int> peers)
    : base_port_(r.port),
      silence_limit_(std::max(min_silence, r.each_wait() / 2)),
      addrs_(addrs),
      answered_(std::make_unique<std::atomic<bool>[]>(addrs.size())),
      watched_(std::make_unique<watch[]>(addrs.size())) {
  // Each rank starts with the rank after its own, so that the ranks do not
  // all ask the same peer at once.
  std::stable_partition(peers.begin(), peers.end(), [rank](int p) { return p > rank; });
  thread_ = fabric::start_without_signals<std::jthread>(
      [this, peers = std::move(peers)](const std::stop_token& stop) { first_questions(stop, peers); });
}

departures::~departures() = default;

void departures::first_questions(const std::stop_token& stop, const std::vector<int>& peers) {
  for (int peer : peers) {
    if (stop.stop_requested()) return;
    auto port = presence_port(base_port_, peer);
    if (!port) continue;
    try {
      auto heard = ask(addrs_[static_cast<std::size_t>(peer)], *port, peer, fabric::deadline::after(max_question));
      answered_[static_cast<std::size_t>(peer)].store(heard.heard == reply::kind::answered);
    } catch (const fabric::error&) {
      return;  // Ctrl-C: the run ends
    }
  }
}

bool departures::seen_answering(int peer) const {
  return peer >= 0 && static_cast<std::size_t>(peer) < addrs_.size() && answered_[static_cast<std::size_t>(peer)].load();
}

std::optional<std::string> departures::why_gone(int peer, std::optional<long> step) {
  return why_gone(peer, max_question_gap, step);
}

std::vector<std::pair<int, std::string>> departures::gone_of(const std::vector<int>& missing,
                                                             const fabric::deadline& until) {
  // A pass asks each peer once; a silent one takes a question's whole
  // wait, so the gap between one peer's questions grows with them.
  auto gap = max_question_gap + max_departure_question * static_cast<long>(missing.size());
  std::vector<std::pair<int, std::string>> out;
  for (int peer : missing) {
    if (until.expired()) break;
    if (auto why = why_gone(peer, gap, std::nullopt)) out.emplace_back(peer, std::move(*why));
  }
  return out;
}

std::optional<std::string> departures::why_gone(int peer, std::chrono::milliseconds gap, std::optional<long> step) {
  auto port = presence_port(base_port_, peer);
  if (!port || !seen_answering(peer)) return std::nullopt;
  auto& w = watched_[static_cast<std::size_t>(peer)];
  auto arrived = fabric::clock::now();
  std::lock_guard<std::mutex> hold(w.lock);
  // A question that ended while this thread waited for the lock (another
  // rail's meeting asked) is as fresh as its own would be.
  if (w.heard_at <= arrived) {
    auto asked = fabric::clock::now();
    w.heard = ask(addrs_[static_cast<std::size_t>(peer)], *port, peer, fabric::deadline::after(max_departure_question));
    w.heard_at = fabric::clock::now();
    auto& silent = w.silent;
    if (w.heard.heard == reply::kind::answered) {
      silent.reset();
    } else if (w.heard.heard == reply::kind::silent) {
      // A silence is one while the questions come close together (a
      // meeting's, once a second): one found in an earlier meeting starts over.
      if (silent && asked - silent->last > gap) silent.reset();
      if (!silent) silent = watch::silence{asked, asked, 0};
      silent->last = w.heard_at;
      ++silent->questions;
    }
  }
  const auto& heard = w.heard;
  if (heard.heard == reply::kind::answered) {
    // Done with the pair it was to meet us in, without meeting: its side
    // failed on its own (no device, a size above its MTU), and says why.
    if (step && heard.step > *step) return "moved on past this pair (its side of it ended without meeting this one)";
    return std::nullopt;
  }
  if (heard.heard == reply::kind::refused) return "left the sweep (its rank answered at the start, and refuses connections now)";
  const auto& silent = w.silent;
  auto quiet = fabric::clock::now() - (silent ? silent->since : fabric::clock::now());
  if (!silent || silent->questions < 2 || quiet < silence_limit_) return std::nullopt;
  return fmt::format("stopped answering (its rank answered at the start, and nothing for {:.0f} s now: "
                     "its process is stopped, or its host is gone)",
                     std::chrono::duration<double>(quiet).count());
}

std::function<bool()> peer_on_its_way(const run_options& r, const std::string& addr, int rank, long step) {
  auto port = presence_port(r.port, rank);
  if (!port) return {};
  auto each = std::min(r.each_wait(), max_question);
  struct watch {
    std::optional<long> last;
    int stalls = 0;
  };
  // A peer waits out a dead host of its own for at most max_late_rounds + 1
  // pair timeouts in one round, and asking comes once a pair timeout: more
  // answers than that without a move, it is stuck.
  constexpr int max_stalls = max_late_rounds + 2;
  return [=, seen = std::make_shared<watch>()] {
    auto at = ask(addr, *port, rank, fabric::deadline::after(each));
    if (at.heard != reply::kind::answered || at.step > step) return false;
    seen->stalls = seen->last == at.step ? seen->stalls + 1 : 0;
    seen->last = at.step;
    return seen->stalls < max_stalls;
  };
}

}  // namespace sweep
