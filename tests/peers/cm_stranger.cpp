// A stranger at a check's port, for the fabric-sweep tests: it connects to
// ADDR:PORT over and over for MS milliseconds, as fast as it can, from
// AT_ONCE dialers side by side (1 unless told), with a request that carries
// no pair's key (a stray client, a scanner), and takes whatever answer
// comes (a refusal, an unreachable port) before the next. With several at
// once, a stranger's request is nearly always queued at the listener when
// the pair's client dials.
//   cm_stranger ADDR PORT MS [AT_ONCE]
// Prints how many requests it made and how many were refused; exits 0, 1
// on failure, 2 on bad use.
#include "fabric/cm/rc.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<unsigned> tries{0}, refused{0};

void dial_until(const fabric::rc_target& target, const fabric::deadline& until) {
  fabric::rc_config cfg;
  cfg.send_depth = cfg.recv_depth = 1;
  while (!until.expired()) {
    ++tries;
    try {
      auto c = fabric::prepare_rc_client(target, cfg, fabric::wait_limit(std::chrono::milliseconds(2000)));
      fabric::connect_rc(c, fabric::deadline::after(std::chrono::milliseconds(2000)));
    } catch (const fabric::error&) {
      ++refused;
    }
  }
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 4 && argc != 5) {
    fmt::print(stderr, "usage: cm_stranger ADDR PORT MS [AT_ONCE]\n");
    return 2;
  }
  fabric::rc_target target{argv[1], "", static_cast<std::uint16_t>(std::stoul(argv[2]))};
  auto until = fabric::deadline::after(std::chrono::milliseconds(std::stoul(argv[3])));
  unsigned at_once = argc == 5 ? static_cast<unsigned>(std::stoul(argv[4])) : 1;
  std::vector<std::jthread> dialers;
  for (unsigned i = 0; i < at_once; ++i) dialers.emplace_back(dial_until, std::cref(target), std::cref(until));
  dialers.clear();
  fmt::print("{} requests, {} refused or unanswered\n", tries.load(), refused.load());
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "cm_stranger: {}\n", e.what());
  return 1;
}
