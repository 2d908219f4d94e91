#include "fabric/cli/cli.hpp"
#include "fabric/base/error.hpp"

#include <gtest/gtest.h>

using fabric::exit_code;

TEST(error, errno_classification) {
  EXPECT_EQ(fabric::classify_errno(ENODEV), exit_code::no_device);
  EXPECT_EQ(fabric::classify_errno(ETIMEDOUT), exit_code::timeout);
  EXPECT_EQ(fabric::classify_errno(ECONNREFUSED), exit_code::connect_failed);
  EXPECT_EQ(fabric::classify_errno(EADDRNOTAVAIL), exit_code::resolve_failed);
  EXPECT_EQ(fabric::classify_errno(ENOMEM), exit_code::system);
}

TEST(error, throw_errno_names_call_and_reason) {
  try {
    fabric::check_rc(-1 * 0 - 1, "rdma_bind_addr 10.0.0.1");
    FAIL();
  } catch (const fabric::error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("rdma_bind_addr 10.0.0.1: ", 0), 0u);
  }
}

TEST(error, check_ret_uses_returned_errno) {
  try {
    fabric::check_ret(ETIMEDOUT, "ibv_modify_qp");
    FAIL();
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), exit_code::timeout);
    EXPECT_STREQ(e.what(), "ibv_modify_qp: Connection timed out");
  }
}

TEST(document, common_keys) {
  auto ok = fabric::cli::make_document("rping", {});
  EXPECT_EQ(ok["tool"], "rping");
  EXPECT_EQ(ok["ok"], true);
  EXPECT_EQ(ok["exit_code"], 0);
  EXPECT_TRUE(ok["error"].is_null());
  auto bad = fabric::cli::make_document("udaddy", {exit_code::timeout, "no reply"});
  EXPECT_EQ(bad["ok"], false);
  EXPECT_EQ(bad["exit_code"], 6);
  EXPECT_EQ(bad["error"], "no reply");
}

TEST(document, exit_code_names_are_stable) {
  EXPECT_EQ(fabric::to_string(exit_code::usage), "usage");
  EXPECT_EQ(fabric::to_string(exit_code::interrupted), "interrupted");
}

TEST(document, test_end_lines_are_the_originals_and_absent_with_json) {
  testing::internal::CaptureStdout();
  fabric::console human("udaddy", fabric::output_mode::human);
  human.test_end(exit_code::timeout);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "test complete\nreturn status 6\n");
  testing::internal::CaptureStdout();
  fabric::console json("udaddy", fabric::output_mode::document);
  json.test_end(exit_code::ok);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}
