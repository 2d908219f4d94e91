#pragma once
/// The report's locate stage: the judged matrix joined to one or two
/// fabric documents. Each host is looked for by its port as its lines gave
/// it, else by its name; the judged pairs are handed to locate(); its
/// suspects, and which one explains each bad pair, go into the matrix.

#include "fabric-sweep/discover/subnet.hpp"
#include "fabric-sweep/report/locate/locate.hpp"
#include "fabric-sweep/report/merge/matrix.hpp"

#include <vector>

namespace sweep {

/// Each host of the matrix, in its order, as the locating looks for it:
/// the port GUID or LID its lines carried, else its name. The one place a
/// host's port is looked up.
std::vector<locate::endpoint_hint> endpoints_of(const matrix& m);

/// Locates the judged pairs of `m` (slow and failed are bad; missing
/// pairs are left out, and counted) on `before`, the fabric the sweep ran
/// on, its counters compared with `after`'s when given; without pairs, a
/// fabric check of its own. Sets m.located, and adds locate's notes to
/// m.notes.
void locate_pairs(matrix& m, const subnet::fabric& before, const subnet::fabric* after);

}  // namespace sweep
