// A stranger at a check's port, for the fabric-sweep tests: it connects to
// ADDR:PORT over and over for MS milliseconds, as fast as it can, with a
// request that carries no pair's key (a stray client, a scanner), and takes
// whatever answer comes (a refusal, an unreachable port) before the next.
//   cm_stranger ADDR PORT MS
// Prints how many requests it made and how many were refused; exits 0, 1
// on failure, 2 on bad use.
#include "fabric/cm/rc.hpp"

#include <fmt/format.h>

#include <chrono>
#include <string>

int main(int argc, char** argv) try {
  if (argc != 4) {
    fmt::print(stderr, "usage: cm_stranger ADDR PORT MS\n");
    return 2;
  }
  fabric::rc_target target{argv[1], "", static_cast<std::uint16_t>(std::stoul(argv[2]))};
  auto until = fabric::deadline::after(std::chrono::milliseconds(std::stoul(argv[3])));
  fabric::rc_config cfg;
  cfg.send_depth = cfg.recv_depth = 1;
  unsigned tries = 0, refused = 0;
  while (!until.expired()) {
    ++tries;
    try {
      auto c = fabric::prepare_rc_client(target, cfg, fabric::wait_limit(std::chrono::milliseconds(2000)));
      fabric::connect_rc(c, fabric::deadline::after(std::chrono::milliseconds(2000)));
    } catch (const fabric::error&) {
      ++refused;
    }
  }
  fmt::print("{} requests, {} refused or unanswered\n", tries, refused);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "cm_stranger: {}\n", e.what());
  return 1;
}
