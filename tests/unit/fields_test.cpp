#include "fabric/cli/fields.hpp"
#include "rping/rping.hpp"

#include <gtest/gtest.h>

#include <optional>

using fabric::cli::field;
using fabric::cli::fields;

TEST(fields, one_put_says_the_value_under_its_key_and_in_its_words) {
  fields f;
  f.line("tool: ").put(field{"sent", "sent {}"}, 20).put(field{"expected", "of {}", " "}, 25).put(field{"lost", "lost {}"}, 5);
  EXPECT_EQ(f.json()["sent"], 20);
  EXPECT_EQ(f.json()["expected"], 25);
  ASSERT_EQ(f.lines().size(), 1u);
  EXPECT_EQ(f.lines()[0], "tool: sent 20 of 25, lost 5");
}

TEST(fields, a_missing_value_is_null_and_left_off_the_line) {
  fields f;
  f.line("x: ").put(field{"setup_us", "setup {:.2f} ms", ", ", 1e-3}, std::optional<double>{}).put(field{"n", "{} n"}, 1);
  EXPECT_TRUE(f.json()["setup_us"].is_null());
  EXPECT_EQ(f.lines()[0], "x: 1 n");
}

TEST(fields, the_text_may_scale_a_number_the_document_keeps_as_it_is) {
  fields f;
  f.line().put(field{"elapsed_us", "{:.3f} ms", ", ", 1e-3}, 2500.0);
  EXPECT_EQ(f.json()["elapsed_us"], 2500.0);
  EXPECT_EQ(f.lines()[0], "2.500 ms");
}

TEST(fields, values_the_line_does_not_give_and_lines_that_say_nothing_are_left_out) {
  fields f;
  f.line("a: ").put(field{"failed", "{} failed"}, 0, false).say("words");
  f.line("b: ").put(field{"rate", "{} /s"}, std::optional<double>{});
  EXPECT_EQ(f.json()["failed"], 0);
  EXPECT_TRUE(f.json()["rate"].is_null());
  ASSERT_EQ(f.lines().size(), 1u);
  EXPECT_EQ(f.lines()[0], "a: words");
}

TEST(fields, statistics_are_the_vocabulary_s_object_and_its_summary_line) {
  fabric::latency_stats s;
  s.add(10);
  fields f;
  f.line().put(field{"rtt", "rtt {}"}, s);
  EXPECT_EQ(f.json()["rtt"]["count"], 1);
  EXPECT_EQ(f.lines()[0], "rtt " + fabric::format_summary(s.summary()));
}

TEST(fields, rping_says_verify_errors_where_its_document_does) {
  rping::connection_result c;
  c.pings = 10;
  c.verify_errors = 2;
  EXPECT_EQ(rping::result_json(c)["verify_errors"], 2);
  EXPECT_EQ(rping::format_stats(c).rfind("10 pings, 2 verify errors, rtt ", 0), 0u) << rping::format_stats(c);
}
