#pragma once
/// The services of -S, contacted one after another: each asked for what
/// the options want of it (-d lookups, -P counters, -e endpoints). Owns
/// only the connection to the service in hand.

#include "ib_acme.hpp"
#include "printer.hpp"

namespace ib_acme {

/// How the services' part of a run went.
struct session_outcome {
  hard_failure hard;
  bool query_failed = false;  ///< a -P or -e query that was asked for failed
};

/// Contacts each service of -S in turn and does what the options ask of
/// it (-d, -P, -e); fills `r` and sets r.return_status as the original.
session_outcome query_services(const options& opt, report& r, const printer& out);

}  // namespace ib_acme
