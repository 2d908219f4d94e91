// Host name lookups within a bound, and the text of addresses and GIDs.
#include "fabric/base/error.hpp"
#include "fabric/base/lookup.hpp"
#include "fabric/base/sockaddr.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <array>
#include <chrono>
#include <cstdint>

namespace {

constexpr std::chrono::milliseconds a_while{5000};

addrinfo stream_hints() {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  return hints;
}

}  // namespace

TEST(lookup, an_address_literal_comes_back_with_its_port_and_no_resolver) {
  auto found = fabric::lookup("10.0.0.7", "4791", stream_hints(), std::chrono::milliseconds(0));
  ASSERT_TRUE(found);
  EXPECT_EQ(fabric::format_addr(found->ai_addr), "10.0.0.7");
  EXPECT_EQ(fabric::sockaddr_port(found->ai_addr), 4791);
  EXPECT_EQ(fabric::lookup_host("fd00::1", AF_UNSPEC, std::chrono::milliseconds(0)), "fd00::1");
}

TEST(lookup, a_name_is_looked_up) {
  auto found = fabric::lookup("localhost", "80", stream_hints(), a_while);
  ASSERT_TRUE(found);
  auto text = fabric::format_addr(found->ai_addr);
  EXPECT_TRUE(text == "127.0.0.1" || text == "::1") << text;
  EXPECT_EQ(fabric::sockaddr_port(found->ai_addr), 80);
}

TEST(lookup, a_name_that_does_not_exist_fails_as_unresolved) {
  try {
    (void)fabric::lookup("no-such-host.invalid", {}, stream_hints(), a_while);
    FAIL() << "looked up";
  } catch (const fabric::error& e) {
    EXPECT_TRUE(e.code() == fabric::exit_code::resolve_failed || e.code() == fabric::exit_code::timeout) << e.what();
    EXPECT_NE(std::string(e.what()).find("no-such-host.invalid"), std::string::npos) << e.what();
  }
}

TEST(sockaddr_text, a_gid_is_ipv6_text) {
  std::array<std::uint8_t, 16> gid{};
  gid[10] = gid[11] = 0xff;
  gid[12] = 10, gid[15] = 1;
  EXPECT_EQ(fabric::format_gid(gid), "::ffff:10.0.0.1");
  gid = {0xfe, 0x80};
  gid[15] = 2;
  EXPECT_EQ(fabric::format_gid(gid), "fe80::2");
}
