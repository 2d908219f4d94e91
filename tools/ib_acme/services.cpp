// The services of -S, one after another, each asked what the options want.
#include "services.hpp"

#include "counters.hpp"
#include "endpoints.hpp"
#include "lookups.hpp"

#include "fabric/acm/acm.hpp"
#include "fabric/cli/range.hpp"

#include <cstring>
#include <optional>

namespace ib_acme {

using fabric::error;
using fabric::exit_code;
namespace acm = fabric::acm;

void hard_failure::note(const error& e) {
  if (code == exit_code::ok) {
    code = e.code();
    message = e.what();
  }
}

session_outcome query_services(const options& opt, report& r, const printer& out) {
  session_outcome outcome;
  lookups resolver(opt, r, out);
  counters perf(opt, r, out);
  endpoints eps(opt, r, out);
  auto said = [&] { out.result(result_json(r.services.back(), r.services.size() - 1)); };
  for (const auto& svc : fabric::expand_range(opt.service)) {
    std::optional<acm::client> c;
    try {
      c.emplace(acm::client::connect(svc, acm::service_port(opt.port_file), opt.timeout.next(), service_user_uid(opt)));
      r.return_status = 0;
    } catch (const acm::connect_error& e) {
      out("{},unable to contact service: {}\n", fabric::printable(svc), std::strerror(e.err()));
      // The original returns the connect's errno for a unix socket, -1 over TCP.
      r.return_status = !svc.empty() && svc.front() == '/' ? e.err() : -1;
      outcome.hard.note(e);
      r.services.push_back({svc, false, e.what()});
      said();
      continue;
    }
    // In the report before its queries: a run stopped in the middle still names it.
    r.services.push_back({svc, true, {}});
    try {
      if (!opt.dest.empty()) r.return_status = resolver.resolve_all(*c, svc);
      if (opt.perf != perf_mode::none) perf.query(*c, svc);
      if (opt.endpoints) eps.list(*c, svc);
    } catch (const error& e) {
      if (e.ends_run()) throw;
      outcome.hard.note(e);
      r.services.back().error = e.what();
      r.return_status = -1;
    }
    said();
  }
  outcome.query_failed = perf.failed() || eps.failed();
  return outcome;
}

}  // namespace ib_acme
