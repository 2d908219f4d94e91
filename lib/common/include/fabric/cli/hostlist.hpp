#pragma once
/// Slurm's host-list syntax, as SLURM_JOB_NODELIST and `clush -w` write it:
/// `node[01-03,07],gpu[1-2]-ib,login` names node01 node02 node03 node07
/// gpu1-ib gpu2-ib login. Commas inside brackets separate ranges, outside
/// they separate items; an item may hold several bracket groups
/// (`r[1-2]n[1-2]` is r1n1 r1n2 r2n1 r2n2); a range's low bound sets the
/// zero padding.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fabric {

/// The most names one host list may expand to.
inline constexpr std::size_t max_hostlist_names = 65536;

/// Expands a host list, in order. Throws fabric::error(exit_code::usage)
/// for unbalanced brackets, a range that is not `N` or `N-M` with N <= M,
/// an empty name, or more than max_hostlist_names names.
std::vector<std::string> expand_hostlist(std::string_view text);

}  // namespace fabric
