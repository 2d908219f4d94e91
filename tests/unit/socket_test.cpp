// Stream sockets: what one dial finds at a port.
#include "fabric/base/socket.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>

namespace {

/// A loopback port of this test process's own (another run of the suite may be beside it).
std::uint16_t own_port() { return static_cast<std::uint16_t>(20000 + ::getpid() % 10000); }

fabric::deadline soon() { return fabric::deadline::after(std::chrono::seconds(5)); }

}  // namespace

TEST(socket, a_probe_tells_a_listener_from_a_refusal) {
  auto port = own_port();
  {
    auto listener = fabric::listen_tcp(port);
    EXPECT_EQ(fabric::probe_tcp("127.0.0.1", port, soon()), fabric::dial_answer::listening);
  }
  EXPECT_EQ(fabric::probe_tcp("127.0.0.1", port, soon()), fabric::dial_answer::refused) << "the listener went";
}
