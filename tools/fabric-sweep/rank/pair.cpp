// One pair as one side sees it: its check run by the table's entry, and
// its lines of output.
#include "fabric-sweep/rank/pair.hpp"

#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace sweep {

namespace {

nlohmann::json transfer_json(const std::optional<fabric::transfer>& t) {
  if (!t) return nullptr;
  return {{"bytes", t->bytes}, {"elapsed_us", t->seconds * 1e6}, {"gbps", t->gbps()}};
}

}  // namespace

void run_check(const pair_job& job, pair_result& out) {
  const auto& kind = kind_of(job.options.check);
  if (!kind.run)
    throw fabric::error(fabric::exit_code::usage, fmt::format("the {} check has no pairs of its own", kind.name));
  kind.run(job, out);
}

port_rate rate_facts(const fabric::port_info& p) {
  return {p.rate_gbps().value_or(0), std::string(fabric::speed_name(p.active_speed)),
          std::string(fabric::link_layer_name(p.link_layer)), p.active_mtu};
}

nlohmann::json adapter_json(const fabric::port_info& p) {
  return {{"device", p.device},
          {"port", p.port},
          {"link_layer", fabric::link_layer_name(p.link_layer)},
          {"mtu", p.active_mtu},
          {"width", fabric::width_name(p.active_width)},
          {"speed", fabric::speed_name(p.active_speed)},
          {"rate_gbps", fabric::value_or_null(p.rate_gbps())},
          {"data_rate_gbps", fabric::value_or_null(data_rate_gbps(rate_facts(p)))},
          {"node_guid", p.node_guid ? nlohmann::json(fabric::guid_text(p.node_guid)) : nlohmann::json(nullptr)},
          {"port_guid", p.port_guid ? nlohmann::json(fabric::guid_text(p.port_guid)) : nlohmann::json(nullptr)},
          {"lid", p.lid ? nlohmann::json(p.lid) : nlohmann::json(nullptr)}};
}

std::optional<double> lower_gbps(const pair_result& p) {
  std::optional<double> low;
  for (const auto& way : {p.client_to_server, p.server_to_client})
    if (way) low = std::min(low.value_or(way->gbps()), way->gbps());
  return low;
}

fabric::cli::fields pair_fields(const pair_result& p, std::uint64_t size) {
  namespace field = pair_field;
  fabric::cli::fields f;
  f.line();
  f.put(field::pings, p.pings, false)
      .put(field::received, p.received, false)
      .put(field::connections, p.connections, false)
      .put(field::sent, p.sent, false)
      .put(field::lost, p.lost, false)
      .put(field::lookups, p.lookups, false)
      .put(field::connect_us, p.connect_us, false)
      .put(field::elapsed_us, p.elapsed_us, false)
      .put(field::rtt, p.latency, false);
  if (p.ok) kind_of(p.check).say(f, p, size);
  return f;
}

nlohmann::json pair_json(const pair_result& p, std::size_t index, const std::optional<std::string>& run) {
  bool bandwidth = p.client_to_server || p.server_to_client;
  nlohmann::json j{{"kind", "pair"},
                   {"index", index},
                   {"ok", p.ok},
                   {"error", p.ok ? nlohmann::json(nullptr) : nlohmann::json(p.error)},
                   {"peer_absent", p.peer_absent},
                   {"check", check_name(p.check)},
                   {"sweep", p.sweep + 1},
                   {"round", p.round + 1},
                   {"retest", p.retest},
                   {"server", p.server},
                   {"client", p.client},
                   {"side", p.role},
                   {"server_rail", fabric::text_or_null(p.server_rail)},
                   {"client_rail", fabric::text_or_null(p.client_rail)},
                   {"port", p.port},
                   {"port_guid", p.port_guid ? nlohmann::json(fabric::guid_text(p.port_guid)) : nlohmann::json(nullptr)},
                   {"lid", p.lid ? nlohmann::json(p.lid) : nlohmann::json(nullptr)},
                   {"bandwidth", bandwidth ? nlohmann::json{{"client_to_server", transfer_json(p.client_to_server)},
                                                            {"server_to_client", transfer_json(p.server_to_client)}}
                                           : nlohmann::json(nullptr)},
                   {"run", fabric::value_or_null(run)}};
  j.update(pair_fields(p, 0).json());
  return j;
}

std::string pair_line(const pair_result& p, bool repeating, std::uint64_t size) {
  std::string who = fmt::format("{} <-> {}", p.server, p.client);
  if (p.rails && p.check == check::intra)
    who = fmt::format("{} on {} -> {}", p.server, p.client_rail, p.server_rail);
  else if (p.rails && p.server_rail == p.client_rail)
    who += fmt::format(" on {}", p.server_rail);
  else if (p.rails)
    who += fmt::format(" on {} <-> {}", p.server_rail, p.client_rail);
  std::string head = fmt::format("{}{} {}: {}", repeating ? fmt::format("sweep {} ", p.sweep + 1) : "",
                                 p.retest ? "re-test round" : "round", p.round + 1, who);
  if (!p.ok) return fmt::format("{}: error: {}", head, p.error);
  auto lines = pair_fields(p, size).lines();
  return fmt::format("{}: {}", head, lines.empty() ? std::string() : lines.front());
}

}  // namespace sweep
