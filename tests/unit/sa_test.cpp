// The SA client's words for a MAD status.
#include "fabric/acm/sa.hpp"

#include <gtest/gtest.h>

TEST(sa_status, only_zero_is_success) {
  EXPECT_EQ(fabric::sa::describe_mad_status(0), "success");
  // 0x000c: the common invalid-field code 3, not an SA code.
  EXPECT_EQ(fabric::sa::describe_mad_status(0x000c), "method and attribute not supported");
  EXPECT_EQ(fabric::sa::describe_mad_status(0x0001), "busy");
  EXPECT_EQ(fabric::sa::describe_mad_status(0x0300), "no records");
  EXPECT_EQ(fabric::sa::describe_mad_status(0x0302), "redirect required, no records");
  EXPECT_EQ(fabric::sa::describe_mad_status(0x7f00), "SA code 127");
  EXPECT_EQ(fabric::sa::describe_mad_status(0x0020), "reserved status bits");
}
