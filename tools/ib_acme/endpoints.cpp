// The service's endpoints (-e), printed as the original prints them.
#include "endpoints.hpp"

#include "fabric/base/wait.hpp"

#include <fmt/format.h>

namespace ib_acme {

namespace acm = fabric::acm;

namespace {

/// The endpoint ports listed of one run at most. A service has one a port
/// and P_Key, a few or some dozens; one that answers every index and port
/// (255 x 255 listings of up to a thousand addresses each) would fill the
/// memory the document keeps them in.
constexpr std::size_t most_listed = 1024;

}  // namespace

bool endpoints::list_one(acm::client& c, const std::string& svc, int index) {
  int port_count = 255;
  bool found = false;
  for (int port = 1; port <= port_count; ++port) {
    fabric::throw_if_interrupted();  // a service that answers at once leaves no wait to see Ctrl-C
    if (rep_.endpoints.size() >= most_listed) {
      if (!capped_) out_.warning(fmt::format("the service listed {} endpoint ports; the rest are not asked", most_listed));
      capped_ = true;
      return false;
    }
    auto reply = c.query_ep(static_cast<std::uint8_t>(index), static_cast<std::uint8_t>(port), opt_.timeout.next());
    if (reply.status != 0) continue;
    found = true;
    if (!labels_) {
      out_("svc,guid,port,pkey,ep_index,prov,addr_0,addresses\n");
      labels_ = true;
    }
    std::string row = fmt::format("{},0x{:016x},{},0x{:04x},{},{}", fabric::printable(svc), reply.dev_guid, reply.port_num, reply.pkey,
                                  index, fabric::printable(reply.prov_name));
    for (const auto& a : reply.addrs) row += fmt::format(",{}", fabric::printable(a));
    out_("{}\n", row);
    port_count = reply.phys_port_cnt;
    rep_.endpoints.push_back({svc, index, std::move(reply)});
    out_.result(result_json(rep_.endpoints.back(), rep_.endpoints.size() - 1));
  }
  return found;
}

void endpoints::list(acm::client& c, const std::string& svc) {
  if (opt_.ep_index > 0) {
    if (!list_one(c, svc, opt_.ep_index) && !capped_) {
      out_(" Endpoint {} is not available\n", opt_.ep_index);
      failed_ = true;
    }
    return;
  }
  for (int index = 1; index <= 255 && list_one(c, svc, index); ++index) {
  }
}

}  // namespace ib_acme
