// Slurm host lists, as SLURM_JOB_NODELIST and clush -w write them.
#include "fabric/error.hpp"
#include "fabric/hostlist.hpp"

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
  for (const char* text : {"", "node[1-", "node1]", "n[3-1]", "n[a-b]", "n[1-2", "a,,b", "a,", "n[[1]]", "n[1-100000]"})
    EXPECT_THROW(expand_hostlist(text), fabric::error) << text;
}
