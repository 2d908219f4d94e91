#pragma once
/// The original's reading of an address given without -f: an IP literal,
/// a host name that resolves (replaced by its address), or else a LID.

#include <string>
#include <utility>

namespace ib_acme {

/// `arg` and its format letter (i, n, l, g): as given when `format` is
/// not 'u', else as the original guesses it.
std::pair<std::string, char> guess_dest(const std::string& arg, char format);

}  // namespace ib_acme
