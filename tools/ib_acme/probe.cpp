// The facts the ACM option probe judges by: this host's ports and their
// SA, and the service; and the probe as a whole.
#include "probe.hpp"

#include "fabric/acm/acm.hpp"
#include "fabric/acm/sa.hpp"
#include "fabric/base/sockaddr.hpp"
#include "fabric/verbs/ports.hpp"

#include <fmt/format.h>
#include <infiniband/verbs.h>

#include <sys/stat.h>

#include <map>
#include <memory>

namespace ib_acme {

using nlohmann::json;

namespace {

bool exists(const std::string& path, mode_t type) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

}  // namespace

std::vector<json> collect_ports(const options& opt) {
  std::map<std::pair<std::string, int>, json> ports;
  int count = 0;
  std::unique_ptr<ibv_device*, decltype(&ibv_free_device_list)> list(ibv_get_device_list(&count), &ibv_free_device_list);
  for (int i = 0; list && i < count; ++i) {
    std::unique_ptr<ibv_context, decltype(&ibv_close_device)> ctx(ibv_open_device(list.get()[i]), &ibv_close_device);
    if (!ctx) continue;
    ibv_device_attr attr{};
    if (ibv_query_device(ctx.get(), &attr) != 0) continue;
    std::string dev = ibv_get_device_name(list.get()[i]);
    for (int p = 1; p <= attr.phys_port_cnt; ++p) {
      ibv_port_attr pa{};
      if (ibv_query_port(ctx.get(), static_cast<std::uint8_t>(p), &pa) != 0) continue;
      json j{{"device", dev},
             {"port", p},
             {"link_layer", fabric::link_layer_name(pa.link_layer)},
             {"state", fabric::port_state_name(static_cast<std::uint8_t>(pa.state))},
             {"mtu", fabric::mtu_bytes(pa.active_mtu)},
             {"max_mtu", fabric::mtu_bytes(pa.max_mtu)},
             {"rate_gbps", fabric::width_lanes(pa.active_width) * fabric::lane_gbps(pa.active_speed)},
             {"lid", pa.lid},
             {"sm_lid", pa.sm_lid}};
      json pkeys = json::array();
      for (int k = 0; k < attr.max_pkeys && k < 128; ++k) {
        __be16 pk = 0;
        if (ibv_query_pkey(ctx.get(), static_cast<std::uint8_t>(p), k, &pk) != 0) break;
        auto v = be16toh(pk);
        if (v & 0x7fff) pkeys.push_back(v);
      }
      j["pkeys"] = std::move(pkeys);
      ports[{dev, p}] = std::move(j);
    }
  }
  auto umad_ports = fabric::sa::list_ports();
  for (const auto& u : umad_ports) {
    auto& j = ports[{u.ca, u.port}];
    j["device"] = u.ca;
    j["port"] = u.port;
    if (!u.link_layer.empty()) j["link_layer"] = u.link_layer;
    j["state"] = fabric::sa::state_name(u.state);
    if (!j.contains("rate_gbps") || j["rate_gbps"] == 0) j["rate_gbps"] = u.rate;
    j["lid"] = u.base_lid;
    j["sm_lid"] = u.sm_lid;
    j["sm_sl"] = u.sm_sl;
    j["gid"] = fabric::format_gid(u.gid());
    json pkeys = json::array();
    for (auto k : u.pkeys) pkeys.push_back(k);
    j["pkeys"] = std::move(pkeys);
    j["umad"] = true;
  }
  std::vector<json> out;
  for (auto& [key, j] : ports) {
    if (!j.contains("umad")) j["umad"] = false;
    // The SA answers when a query for the port's own loopback path comes
    // back; the record also tells the path MTU when verbs cannot.
    const fabric::sa::port_info* u = nullptr;
    for (const auto& x : umad_ports)
      if (x.ca == key.first && x.port == key.second) u = &x;
    json sa{{"answered", false}, {"error", nullptr}, {"path_mtu", nullptr}, {"path_rate_gbps", nullptr}};
    if (j["link_layer"] != "InfiniBand") {
      sa["error"] = "not an InfiniBand port";
    } else if (!u) {
      sa["error"] = "no umad device for the port";
    } else if (u->state != 4) {
      sa["error"] = "port not active";
    } else {
      fabric::acm::path_record self;
      self.sgid = self.dgid = u->gid();
      auto ans = fabric::sa::query_path(*u, self, opt.timeout.each());
      sa["answered"] = ans.answered;
      if (ans.record) {
        sa["path_mtu"] = fabric::mtu_bytes(ans.record->mtu);
        sa["path_rate_gbps"] = fabric::rate_gbps(ans.record->rate);
        if (!j.contains("mtu")) j["mtu"] = fabric::mtu_bytes(ans.record->mtu);
      }
      if (!ans.error.empty()) sa["error"] = ans.error;
    }
    j["sa"] = std::move(sa);
    // Every port has every fact; what neither verbs nor umad told is null.
    for (const char* fact_key : {"link_layer", "mtu", "max_mtu", "rate_gbps", "lid", "sm_lid", "sm_sl", "gid"})
      if (!j.contains(fact_key)) j[fact_key] = nullptr;
    out.push_back(std::move(j));
  }
  return out;
}

json probe_service(const options& opt) {
  json s;
  std::string unix_path(fabric::acm::default_unix_path);
  bool unix_present = exists(unix_path, S_IFSOCK);
  bool port_file = exists(opt.port_file, S_IFREG);
  s["unix_socket"] = unix_path;
  s["unix_socket_present"] = unix_present;
  s["port_file"] = opt.port_file;
  s["port_file_present"] = port_file;
  s["port"] = port_file ? nlohmann::json(fabric::acm::service_port(opt.port_file)) : nlohmann::json(nullptr);
  std::string via;
  std::string error;
  try {
    fabric::acm::client::connect(unix_path, 0, opt.timeout.next(), service_user_uid(opt));
    via = "unix";
  } catch (const fabric::error& e) {
    error = e.what();
  }
  if (via.empty()) {
    try {
      fabric::acm::client::connect("localhost", fabric::acm::service_port(opt.port_file), opt.timeout.next(),
                                    service_user_uid(opt));
      via = "tcp";
    } catch (const fabric::error& e) {
      error += std::string("; ") + e.what();
    }
  }
  s["running"] = !via.empty();
  s["via"] = via.empty() ? nlohmann::json(nullptr) : nlohmann::json(via);
  s["error"] = via.empty() ? nlohmann::json(error) : nlohmann::json(nullptr);
  return s;
}

json probe(const options& opt) {
  auto ports = collect_ports(opt);
  json p;
  p["ports"] = ports;
  p["service_status"] = probe_service(opt);
  p.update(probe_providers(opt));
  p["options"] = judge_options(ports, p["service_status"], p["providers"]);
  return p;
}

}  // namespace ib_acme
