// Slurm host lists, as SLURM_JOB_NODELIST and clush -w write them.
#include "fabric/base/error.hpp"
#include "fabric/cli/hostlist.hpp"

#include <gtest/gtest.h>

using fabric::expand_hostlist;
using names = std::vector<std::string>;

TEST(hostlist, plain_names_and_ranges) {
  EXPECT_EQ(expand_hostlist("login"), names{"login"});
  EXPECT_EQ(expand_hostlist("a,b"), (names{"a", "b"}));
  EXPECT_EQ(expand_hostlist("node[01-03,07]"), (names{"node01", "node02", "node03", "node07"}));
  EXPECT_EQ(expand_hostlist("node[8-11]"), (names{"node8", "node9", "node10", "node11"}));
  EXPECT_EQ(expand_hostlist("n[098-101]"), (names{"n098", "n099", "n100", "n101"}));
}

TEST(hostlist, several_items_suffixes_and_groups) {
  EXPECT_EQ(expand_hostlist("node[1-2],gpu[1-2]-ib,login"),
            (names{"node1", "node2", "gpu1-ib", "gpu2-ib", "login"}));
  EXPECT_EQ(expand_hostlist("r[1-2]n[1-2]"), (names{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_THROW(expand_hostlist("fabric-[a-b]x"), fabric::error) << "letters are not a range";
}

TEST(hostlist, bad_lists_are_usage_errors) {
  for (const char* text : {"", "node[1-", "node1]", "n[3-1]", "n[a-b]", "n[1-2", "a,,b", "a,", "n[[1]]", "n[1-100000]",
                           "a\x1b\x07,b", "b\xff", "n 1,n2", "n\t[1-2]"})
    EXPECT_THROW(expand_hostlist(text), fabric::error) << text;
}

TEST(hostlist, many_ranges_in_one_bracket_are_refused_before_they_are_made) {
  // A few KB naming 60000 hosts a hundred times over: refused once the
  // names outgrow a host list, not after making six million of them.
  std::string text = "n[";
  for (int i = 0; i < 100; ++i) {
    if (i > 0) text += ',';
    text += "1-60000";
  }
  text += "]";
  try {
    expand_hostlist(text);
    ADD_FAILURE() << "accepted";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::usage);
    EXPECT_LT(std::string(e.what()).size(), 200u) << "the error quotes the list's start, not all of it";
  }
  EXPECT_THROW(expand_hostlist("a[1-300]b[1-300]"), fabric::error) << "brackets multiplied past the limit";
  EXPECT_EQ(expand_hostlist("a[1-256]b[1-256]").size(), 65536u);
  EXPECT_THROW(expand_hostlist("x,a[1-256]b[1-256]"), fabric::error);
  try {
    expand_hostlist("bad\x1b[2J[");
  } catch (const fabric::error& e) {
    EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << "the list's bytes are escaped";
  }
}
