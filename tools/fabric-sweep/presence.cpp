// Where a rank is in its rounds: its answerer thread, and a waiting
// peer's question.
#include "presence.hpp"

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

namespace sweep {

namespace {

constexpr std::string_view word = "fabric-sweep";
/// An answer is a few dozen bytes; more is not one.
constexpr std::size_t max_answer = 64;
/// The longest a question waits for its answer, whatever --timeout says.
constexpr std::chrono::milliseconds max_question{5000};

/// The longest a dial of departures waits for its answer.
constexpr std::chrono::milliseconds max_departure_dial{1000};

/// Where the rank at `addr`:`port` is: its step, or nullopt when nothing
/// listens there, it does not answer by `until`, or says something else.
std::optional<long> ask(const std::string& addr, std::uint16_t port, int rank, const fabric::deadline& until) {
  try {
    // Asked once: a refusal means nobody answers there.
    auto fd = fabric::dial_tcp_once(addr, port, until);
    std::string in;
    return read_presence(fabric::read_line(fd.get(), in, max_answer, until), rank);
  } catch (const fabric::error& e) {
    if (e.ends_run()) throw;
    return std::nullopt;  // not listening, silent (frozen), gone, or too long an answer
  }
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

departures::departures(const run_options& r, const std::vector<std::string>& addrs, int rank, std::vector<int> peers)
    : base_port_(r.port), addrs_(addrs), listened_(std::make_unique<std::atomic<bool>[]>(addrs.size())) {
  // Each rank starts with the rank after its own, so that the ranks do not
  // all dial the same peer at once.
  std::stable_partition(peers.begin(), peers.end(), [rank](int p) { return p > rank; });
  thread_ = fabric::start_without_signals<std::jthread>(
      [this, peers = std::move(peers)](const std::stop_token& stop) { first_dials(stop, peers); });
}

departures::~departures() = default;

void departures::first_dials(const std::stop_token& stop, const std::vector<int>& peers) {
  for (int peer : peers) {
    if (stop.stop_requested()) return;
    auto port = presence_port(base_port_, peer);
    if (!port) continue;
    try {
      auto answer = fabric::probe_tcp(addrs_[static_cast<std::size_t>(peer)], *port,
                                      fabric::deadline::after(max_departure_dial));
      listened_[static_cast<std::size_t>(peer)].store(answer == fabric::dial_answer::listening);
    } catch (const fabric::error&) {
      return;  // Ctrl-C: the run ends
    }
  }
}

bool departures::seen_listening(int peer) const {
  return peer >= 0 && static_cast<std::size_t>(peer) < addrs_.size() && listened_[static_cast<std::size_t>(peer)].load();
}

bool departures::left(int peer) const {
  auto port = presence_port(base_port_, peer);
  if (!port || !seen_listening(peer)) return false;
  return fabric::probe_tcp(addrs_[static_cast<std::size_t>(peer)], *port, fabric::deadline::after(max_departure_dial)) ==
         fabric::dial_answer::refused;
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
    if (!at || *at > step) return false;
    seen->stalls = seen->last == at ? seen->stalls + 1 : 0;
    seen->last = at;
    return seen->stalls < max_stalls;
  };
}

}  // namespace sweep
