#pragma once
/// Verifying a path the service resolved (-v): through the service (its
/// own SA query) and straight from the SA over umad, compared field by
/// field. Owns the list of this host's umad ports, read on first use.

#include "ib_acme.hpp"
#include "printer.hpp"

#include "fabric/acm/acm.hpp"
#include "fabric/acm/sa.hpp"

#include <optional>
#include <vector>

namespace ib_acme {

/// The SA checks of -v.
class path_verifier {
public:
  path_verifier(const options& o, const printer& out) : opt_(o), out_(out) {}

  /// Verifies l.path both ways, prints the original's line and ours, and
  /// fills l.verified, l.sa and l.error; returns the original's status
  /// (0, or -1 when either check failed).
  int verify(fabric::acm::client& c, lookup& l);

private:
  sa_check direct_sa_check(const fabric::acm::path_record& p);

  const options& opt_;
  const printer& out_;
  std::optional<std::vector<fabric::sa::port_info>> ports_;
};

}  // namespace ib_acme
