// One host alone, as a node health checker asks (NHC gives a check 60 s):
// the ports and PCIe links of its devices, an RC ping-pong with itself over
// the address its sweep peers would dial, and one between each pair of its
// rails. Every wait is bounded by --timeout.
#include "fabric-sweep/health/health.hpp"
#include "fabric-sweep/rank/place.hpp"

#include "fabric/base/files.hpp"
#include "fabric/base/text.hpp"
#include "fabric/cli/console.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sweep {

namespace {

/// "100 pings, rtt min 20.1 p50 24.0 p99 31.2 max 40.0 us"
std::string pings_words(const pair_result& s) {
  const auto& l = *s.latency;
  return fmt::format("{} pings, rtt min {:.1f} p50 {:.1f} p99 {:.1f} max {:.1f} us", s.pings.value_or(0), l.min, l.p50, l.p99,
                     l.max);
}

fabric::verdict check_host(const options& opt, health_report& rep, fabric::console& con) {
  auto host = fabric::host_name();
  rep.address = addresses(opt.run, {host}).front();
  gather(opt.health, this_host(), fabric::all_ports(), rep);
  for (const auto& p : rep.ports) con.line(port_line(p.info));
  for (const auto& d : rep.devices)
    if (auto line = device_line(d); !line.empty()) con.line(line);
  if (active_ports(rep) == 0) return judge(opt, rep);
  ping_host(opt, host, rep);
  if (rep.self->ok && rep.self->latency)
    con.line(fmt::format("self-connection {}:{}: {}", rep.address, rep.self->port, pings_words(*rep.self)));
  for (const auto& r : rep.rail_pairs)
    if (r.result.ok && r.result.latency)
      con.line(fmt::format("rail {} to rail {}, port {}: {}", rail_name(rep.ports[r.from]), rail_name(rep.ports[r.to]),
                           r.result.port, pings_words(r.result)));
  return judge(opt, rep);
}

}  // namespace

fabric::verdict health(const options& opt, health_report& rep, fabric::console& con) {
  con.set_role("health");
  try {
    auto v = check_host(opt, rep, con);
    if (!opt.report.prometheus.empty()) fabric::write_file_atomically(opt.report.prometheus, prometheus_text(opt, rep, v));
    return v;
  } catch (...) {
    // A check that could not finish is no sign of health: the old file
    // must not go on saying healthy.
    if (!opt.report.prometheus.empty())
      fabric::write_file_atomically(opt.report.prometheus,
                                    prometheus_text(opt, rep, {fabric::exit_code::test_failed, "the check did not finish"}));
    throw;
  }
}

}  // namespace sweep
