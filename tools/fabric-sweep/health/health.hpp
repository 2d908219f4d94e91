#pragma once
/// fabric-sweep health: one host alone, as a node health checker asks.

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/pair.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/verbs/ports.hpp"

#include <optional>
#include <string>
#include <vector>

namespace sweep {

/// One host, as a node health checker asks: its RDMA ports and an RC
/// ping-pong with itself over its own address.
struct health_report {
  std::string address;                         ///< this host's, by the address rule
  std::vector<fabric::port_info> ports;
  std::optional<pair_result> self;             ///< the self-connection, once tried
};

/// "100 Gb/sec (4X EDR)": a port's rate in the kernel's words, else in
/// ours from its width and speed.
std::string rate_text(const fabric::port_info& p);

/// A port's line: "rxe0 port 1: Active, Ethernet, MTU 1024, 10 Gb/sec (4X QDR)".
std::string port_line(const fabric::port_info& p);

/// Why an Active port falls short of --expect-rate or --expect-width, as
/// "rxe0 port 1: 2.5 Gb/sec (1X SDR), expected 100"; empty when it does not.
std::string shortfall(const health_options& h, const fabric::port_info& p);

/// The health subcommand's body: ok when a port is Active and the
/// self-connection passed.
fabric::verdict health(const options& opt, health_report& rep, fabric::console& con);
void to_json(nlohmann::json& j, const options& opt, const health_report& rep);
/// The host's health as node_exporter textfile-collector gauges (prometheus.cpp).
std::string prometheus_text(const health_report& rep, const fabric::verdict& v);

}  // namespace sweep
