#include "fabric/flows/payload.hpp"

#include <gtest/gtest.h>

#include <vector>

using fabric::check_payload;
using fabric::fill_payload;

TEST(payload, round_trips_the_sequence_number) {
  std::vector<std::byte> buf(100);
  for (std::uint32_t seq : {0U, 1U, 255U, 65'536U, 0xfffffffeU}) {
    fill_payload(buf, seq);
    auto got = check_payload(buf);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, seq);
  }
}

TEST(payload, sequence_is_big_endian_at_the_front) {
  std::vector<std::byte> buf(8);
  fill_payload(buf, 0x01020304);
  EXPECT_EQ(buf[0], std::byte{1});
  EXPECT_EQ(buf[3], std::byte{4});
  EXPECT_EQ(buf[4], std::byte{static_cast<unsigned char>((0x01020304U * 7U + 4U) & 0xffU)});
}

TEST(payload, detects_a_flipped_byte_anywhere_after_the_header) {
  std::vector<std::byte> buf(64);
  fill_payload(buf, 42);
  for (std::size_t i = 4; i < buf.size(); ++i) {
    auto copy = buf;
    copy[i] ^= std::byte{0x10};
    EXPECT_FALSE(check_payload(copy).has_value()) << "byte " << i;
  }
}

TEST(payload, unfilled_buffers_do_not_pass) {
  std::vector<std::byte> zeros(100);
  EXPECT_FALSE(check_payload(zeros).has_value());
}

TEST(payload, short_messages_carry_only_the_pattern) {
  std::vector<std::byte> buf(3);
  fill_payload(buf, 9);
  auto got = check_payload(buf);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, 0U);
  std::vector<std::byte> empty;
  EXPECT_TRUE(check_payload(empty).has_value());
}
