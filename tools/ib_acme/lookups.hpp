#pragma once
/// The lookups of -d: every destination of the range from every source of
/// -s, each repeated -C times, asked of one service and printed as the
/// original prints them, with -v's verification. Owns the verifier.

#include "ib_acme.hpp"
#include "printer.hpp"
#include "verify.hpp"

#include "fabric/acm/acm.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ib_acme {

/// Resolves -d against the services one after another.
class lookups {
public:
  lookups(const options& o, report& r, const printer& out) : opt_(o), rep_(r), out_(out), verifier_(o, out) {}

  /// Every source x destination lookup with service `svc`; returns the
  /// original's status (that of the last lookup). An error that ends the
  /// session is thrown, after the lookup it struck is reported.
  int resolve_all(fabric::acm::client& c, const std::string& svc);

private:
  void add_lookup(lookup l);
  static std::string_view op_name(char format);
  bool build_request(lookup& l, std::vector<fabric::acm::endpoint>& entries);
  int resolve_one(fabric::acm::client& c, lookup& l);
  [[nodiscard]] std::uint32_t dest_flags() const;

  const options& opt_;
  report& rep_;
  const printer& out_;
  path_verifier verifier_;
};

}  // namespace ib_acme
