// The health check's document: a result for every port, every device,
// the self-connection and every rail pair, each with its own verdict.
#include "fabric-sweep/health/health.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>

namespace sweep {

namespace {

using fabric::text_or_null;
using fabric::value_or_null;

/// The figures of a ping-pong, as the self-connection and a rail pair share them.
void put_pings(nlohmann::json& j, const pair_result& s) {
  j["port"] = s.port;
  j["pings"] = value_or_null(s.pings);
  j["connect_us"] = value_or_null(s.connect_us);
  j["elapsed_us"] = s.elapsed_us;
  j["latency"] = value_or_null(s.latency);
}

}  // namespace

void to_json(nlohmann::json& j, const options& opt, const health_report& rep) {
  const auto& h = opt.health;
  j["role"] = "health";
  j["options"] = options_json(opt);
  nlohmann::json results = nlohmann::json::array();
  auto add = [&results](nlohmann::json item, std::size_t index, const std::string& why) {
    item["index"] = index;
    item["ok"] = why.empty();
    item["error"] = text_or_null(why);
    results.push_back(std::move(item));
  };
  for (std::size_t i = 0; i < rep.ports.size(); ++i) {
    const auto& hp = rep.ports[i];
    const auto& p = hp.info;
    auto why = port_state_problem(h, rep, p);
    if (why.empty()) why = shortfall(h, p);
    add({{"kind", "port"},
         {"device", p.device},
         {"port", p.port},
         {"state", fabric::port_state_name(p.state)},
         {"link_layer", fabric::link_layer_name(p.link_layer)},
         {"mtu", p.active_mtu},
         {"width", fabric::width_name(p.active_width)},
         {"speed", fabric::speed_name(p.active_speed)},
         {"rate_text", text_or_null(p.rate)},
         {"rate_gbps", value_or_null(p.rate_gbps())},
         {"netdev", text_or_null(hp.netdev)},
         {"address", text_or_null(hp.address)}},
        i, why);
  }
  for (std::size_t i = 0; i < rep.devices.size(); ++i) {
    const auto& d = rep.devices[i];
    auto link = d.pcie.value_or(fabric::pcie_link{});
    add({{"kind", "device"},
         {"device", d.name},
         {"pcie_function", text_or_null(link.function)},
         {"pcie_width", value_or_null(link.width)},
         {"pcie_speed_gts", value_or_null(link.speed_gts)},
         {"pcie_max_width", value_or_null(link.max_width)},
         {"pcie_max_speed_gts", value_or_null(link.max_speed_gts)}},
        i, pcie_shortfall(h, d));
  }
  if (rep.self) {
    nlohmann::json self{{"kind", "self"}, {"address", rep.address}};
    put_pings(self, *rep.self);
    add(std::move(self), 0, rep.self->ok ? std::string() : rep.self->error);
  }
  for (std::size_t i = 0; i < rep.rail_pairs.size(); ++i) {
    const auto& r = rep.rail_pairs[i];
    const auto &from = rep.ports[r.from], &to = rep.ports[r.to];
    nlohmann::json pair{{"kind", "rail_pair"},
                        {"device", from.info.device},
                        {"address", text_or_null(from.address)},
                        {"peer_device", to.info.device},
                        {"peer", text_or_null(to.address)}};
    put_pings(pair, r.result);
    add(std::move(pair), i, r.result.ok ? std::string() : r.result.error);
  }
  auto failed = std::count_if(results.begin(), results.end(), [](const nlohmann::json& r) { return !r["ok"].get<bool>(); });
  j["results"] = std::move(results);
  if (rep.address.empty()) {
    j["summary"] = nlohmann::json::object();
    return;
  }
  auto all_ok = [](const auto& pairs) {
    return std::all_of(pairs.begin(), pairs.end(), [](const rail_pair& r) { return r.result.ok; });
  };
  j["summary"] = {{"host", fabric::host_name()},
                  {"address", rep.address},
                  {"port_count", rep.ports.size()},
                  {"active_ports", active_ports(rep)},
                  {"expected_ports", expected_ports(h, rep)},
                  {"failed", failed},
                  {"self_ok", rep.self ? nlohmann::json(rep.self->ok) : nlohmann::json(nullptr)},
                  {"intra_ok", rep.rail_pairs.empty() ? nlohmann::json(nullptr) : nlohmann::json(all_ok(rep.rail_pairs))}};
}

}  // namespace sweep
