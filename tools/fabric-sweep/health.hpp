#pragma once
/// fabric-sweep health: one host alone, as a node health checker asks.

#include "options.hpp"
#include "pair.hpp"

#include "fabric/console.hpp"
#include "fabric/ud.hpp"

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

/// The health subcommand's body: ok when a port is Active and the
/// self-connection passed.
fabric::verdict health(const options& opt, health_report& rep, fabric::console& con);
void to_json(nlohmann::json& j, const options& opt, const health_report& rep);
/// The host's health as node_exporter textfile-collector gauges (prometheus.cpp).
std::string prometheus_text(const health_report& rep, const fabric::verdict& v);

}  // namespace sweep
