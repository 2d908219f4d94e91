#pragma once
/// The endpoints of -e: every port of one endpoint, or of every endpoint
/// until one is missing (a thousand listings at most), printed as rows
/// under one header line for the run. Owns whether the header was printed.

#include "ib_acme.hpp"
#include "printer.hpp"

#include "fabric/acm/acm.hpp"

#include <string>

namespace ib_acme {

/// -e against the services one after another.
class endpoints {
public:
  endpoints(const options& o, report& r, const printer& out) : opt_(o), rep_(r), out_(out) {}

  /// What -e asks of service `svc`.
  void list(fabric::acm::client& c, const std::string& svc);
  /// The endpoint asked for was not there.
  [[nodiscard]] bool failed() const noexcept { return failed_; }

private:
  bool list_one(fabric::acm::client& c, const std::string& svc, int index);

  const options& opt_;
  report& rep_;
  const printer& out_;
  bool labels_ = false;
  bool failed_ = false;
  bool capped_ = false;  // the run listed as many as it keeps
};

}  // namespace ib_acme
