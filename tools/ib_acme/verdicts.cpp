// The probe's verdicts: which value of each ibacm option can work on this
// host, and why, judged from the facts the probe found.
#include "probe.hpp"

#include <fmt/format.h>

#include <string>

namespace ib_acme {

using nlohmann::json;

namespace {

// What ibacm_opts.cfg generates (ib_acme -O); the probe judges these values.
constexpr unsigned generated_min_mtu = 2048;
constexpr double generated_min_rate = 10;

json verdict(std::string option, std::string value, bool usable, std::string why) {
  return {{"option", std::move(option)}, {"value", std::move(value)}, {"usable", usable}, {"why", std::move(why)}};
}

}  // namespace

json judge_options(const std::vector<json>& ports, const json& service, const json& providers) {
  json out = json::array();
  std::vector<const json*> ib_active;
  bool sm = false, sa = false;
  for (const auto& p : ports) {
    if (fact(p, "link_layer", std::string("")) == "InfiniBand" && fact(p, "state", std::string("")) == "Active") {
      ib_active.push_back(&p);
      if (fact(p, "sm_lid", 0) != 0) sm = true;
      if (fact(p["sa"], "answered", false)) sa = true;
    }
  }
  bool any_ib = !ib_active.empty();
  out.push_back(verdict("addr_prot", "acm", any_ib && sm,
                        !any_ib ? "needs IB multicast: no active InfiniBand port"
                        : !sm   ? "needs IB multicast: no subnet manager known to the ports"
                                : "active InfiniBand port with a subnet manager"));
  out.push_back(verdict("route_prot", "sa", sa, sa ? "the SA answers a PathRecord query" : "no SA answered a PathRecord query"));
  out.push_back(verdict("route_prot", "acm", any_ib && sm, any_ib && sm ? "IB multicast available" : "needs IB multicast"));
  out.push_back(verdict("loopback_prot", "local", true, "always available"));

  unsigned mtu_floor = 0;
  double rate_floor = 0;
  for (const auto* p : ib_active) {
    unsigned m = fact(*p, "mtu", 0u);
    if (m && (mtu_floor == 0 || m < mtu_floor)) mtu_floor = m;
    double r = fact(*p, "rate_gbps", 0.0);
    if (r > 0 && (rate_floor == 0 || r < rate_floor)) rate_floor = r;
  }
  out.push_back(verdict("min_mtu", std::to_string(generated_min_mtu), mtu_floor >= generated_min_mtu,
                        mtu_floor ? fmt::format("smallest active InfiniBand port MTU {}", mtu_floor)
                                  : "no active InfiniBand port MTU known"));
  if (mtu_floor) out.back()["suggested"] = std::to_string(mtu_floor);
  out.push_back(verdict("min_rate", fmt::format("{}", generated_min_rate), rate_floor >= generated_min_rate,
                        rate_floor > 0 ? fmt::format("slowest active InfiniBand port {} Gb/s", rate_floor)
                                       : "no active InfiniBand port rate known"));
  if (rate_floor > 0) out.back()["suggested"] = fmt::format("{}", rate_floor);

  bool running = fact(service, "running", false);
  bool unix_sock = fact(service, "unix_socket_present", false);
  bool port_file = fact(service, "port_file_present", false);
  std::string via = fact(service, "via", std::string(""));
  out.push_back(verdict("server_mode", "unix", !running || via == "unix",
                        running ? (via == "unix" ? "the service answers on its unix socket" : "the running service does not use its unix socket")
                                : (unix_sock ? "a stale unix socket is present" : "the service is not running; any mode can be set")));
  out.push_back(verdict("server_mode", "open", !running || via == "tcp" || port_file,
                        port_file ? "a TCP port file is present" : running ? "the running service announces no TCP port" : "the service is not running"));
  out.push_back(verdict("server_mode", "loop", !running || via == "tcp" || port_file,
                        port_file ? "a TCP port file is present" : running ? "the running service announces no TCP port" : "the service is not running"));

  bool have_prov = false;
  for (const auto& p : providers)
    if (fact(p, "fits", false)) have_prov = true;
  out.push_back(verdict("provider", "ibacmp", have_prov,
                        have_prov ? "a provider with a matching interface version is installed"
                                  : "no loadable provider with a matching interface version"));
  out.push_back(verdict("service", "running", running, running ? "an ibacm service answers" : "no ibacm service answers"));
  return out;
}

}  // namespace ib_acme
