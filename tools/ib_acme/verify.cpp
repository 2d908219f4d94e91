// SA verification of a resolved path, through the service and directly.
#include "verify.hpp"

#include <fmt/format.h>

#include <cstring>
#include <span>

namespace ib_acme {

namespace acm = fabric::acm;

int path_verifier::verify(acm::client& c, lookup& l) {
  acm::endpoint e = acm::endpoint::path(*l.path, acm::flag_query_sa);
  auto reply = c.resolve(std::span(&e, 1), opt_.timeout.next());
  int ret = 0;
  if (reply.status != 0) {
    l.verified = false;
    l.verify_error = acm::status_name(reply.status);
    l.error = fmt::format("SA verification through the service: {}", l.verify_error);
    out_("SA verification: failed {}\n", std::strerror(acm::status_errno(reply.status)));
    ret = -1;
  } else {
    l.verified = true;
    out_("SA verification: success\n");
  }
  l.sa = direct_sa_check(*l.path);
  if (l.sa->checked) {
    if (l.sa->match()) {
      out_("SA path record: match ({})\n", l.sa->where());
    } else if (!l.sa->record) {
      out_("SA path record: no answer ({}): {}\n", l.sa->where(), l.sa->reason);
      if (ret == 0) l.error = "SA: " + l.sa->reason;
      ret = -1;
    } else {
      std::string diffs;
      for (const auto& m : l.sa->mismatches) diffs += fmt::format(" {} acm {} sa {};", m.field, m.acm, m.sa);
      if (!diffs.empty()) diffs.pop_back();
      out_("SA path record: mismatch ({}):{}\n", l.sa->where(), diffs);
      if (ret == 0) l.error = "the SA's path record differs from the service's";
      ret = -1;
    }
  }
  return ret;
}

sa_check path_verifier::direct_sa_check(const acm::path_record& p) {
  sa_check check;
  if (!ports_) ports_ = fabric::sa::list_ports();
  const fabric::sa::port_info* chosen = nullptr;
  for (const auto& port : *ports_)
    if (port.infiniband() && port.gid() == p.sgid) chosen = &port;
  if (!chosen)
    for (const auto& port : *ports_)
      if (port.infiniband() && port.state == 4) {
        chosen = &port;
        break;
      }
  if (!chosen) {
    check.reason = ports_->empty() ? "no umad port on this host" : "no active InfiniBand port";
    return check;
  }
  check.device = chosen->ca;
  check.port = chosen->port;
  auto answer = fabric::sa::query_path(*chosen, p, opt_.timeout.each());
  if (!answer.answered && answer.error.rfind("open", 0) == 0) {
    check.reason = answer.error;  // could not even ask: not a verdict
    return check;
  }
  check.checked = true;
  if (!answer.record) {
    check.reason = answer.error;
    return check;
  }
  check.record = answer.record;
  check.mismatches = compare_paths(p, *answer.record);
  return check;
}

}  // namespace ib_acme
