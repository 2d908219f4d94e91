#pragma once
/// The performance counters of -P: all combined, one endpoint's, every
/// endpoint's, or the one of -s's address; printed in rows (one header
/// line for the run) or in a column. Owns whether the header was printed.

#include "ib_acme.hpp"
#include "printer.hpp"

#include "fabric/acm/acm.hpp"

#include <string>

namespace ib_acme {

/// -P against the services one after another.
class counters {
public:
  counters(const options& o, report& r, const printer& out) : opt_(o), rep_(r), out_(out) {}

  /// What -P asks of service `svc`.
  void query(fabric::acm::client& c, const std::string& svc);
  /// A query that was asked for failed.
  [[nodiscard]] bool failed() const noexcept { return failed_; }

private:
  bool query_one(fabric::acm::client& c, const std::string& svc, int index);

  const options& opt_;
  report& rep_;
  const printer& out_;
  bool labels_ = false;
  bool failed_ = false;
};

}  // namespace ib_acme
