#pragma once
/// The host range syntax of rdma-core's ib_acme: `node[1-3,5]` names
/// node1 node2 node3 node5; the first number of each item sets the zero
/// padding (`node[01-10]` gives node01 ... node10). Text without brackets
/// is one name.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fabric {

/// The most names one range may expand to.
inline constexpr std::size_t max_range_names = 65536;

/// Expands a range. Throws fabric::error(exit_code::usage) for an item that
/// is not `N` or `N-M` in decimal, an empty list, or more than
/// max_range_names names. Text after the closing bracket is ignored, as
/// the original does.
std::vector<std::string> expand_range(std::string_view text);

}  // namespace fabric
