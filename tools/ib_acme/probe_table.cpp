// The probe's human table.
#include "probe.hpp"

#include <fmt/format.h>

namespace ib_acme {

using nlohmann::json;

std::string format_probe(const json& p) {
  std::string s = "ACM option probe\n";
  s += fmt::format("{:<12} {:>4} {:<10} {:<7} {:>5} {:>6} {:>5} {:>6} {:<8} {}\n", "device", "port", "link", "state", "mtu",
                   "rate", "lid", "sm_lid", "sa", "pkeys");
  for (const auto& port : p["ports"]) {
    std::string pkeys;
    for (const auto& k : fact(port, "pkeys", json::array()))
      pkeys += fmt::format("{}0x{:04x}", pkeys.empty() ? "" : ",", k.get<unsigned>());
    const auto& sa = port["sa"];
    std::string sa_text = fact(sa, "answered", false) ? (known(sa, "error") ? "error" : "answers") : "no";
    s += fmt::format("{:<12} {:>4} {:<10} {:<7} {:>5} {:>6} {:>5} {:>6} {:<8} {}\n", fact(port, "device", std::string("")),
                     fact(port, "port", 0), fact(port, "link_layer", std::string("?")), fact(port, "state", std::string("?")), fact(port, "mtu", 0u),
                     fmt::format("{}", fact(port, "rate_gbps", 0.0)), fact(port, "lid", 0u), fact(port, "sm_lid", 0u),
                     sa_text, pkeys.empty() ? "-" : pkeys);
  }
  if (p["ports"].empty()) s += "  (no RDMA port)\n";
  const auto& svc = p["service_status"];
  s += fmt::format("service: {}", fact(svc, "running", false) ? "running (" + fact(svc, "via", std::string("")) + ")" : "not running");
  // Paths, file names and the loader's messages are the user's or the
  // file system's bytes.
  auto text = [](const json& j, const char* key, const char* absent) { return fabric::printable(fact(j, key, std::string(absent))); };
  s += fmt::format("; unix socket {} {}; port file {} {}\n", text(svc, "unix_socket", ""),
                   fact(svc, "unix_socket_present", false) ? "present" : "absent", text(svc, "port_file", ""),
                   fact(svc, "port_file_present", false) ? "present" : "absent");
  s += fmt::format("providers in {}:", text(p, "provider_path", ""));
  if (known(p, "provider_error")) s += fmt::format(" {}", text(p, "provider_error", ""));
  s += "\n";
  for (const auto& x : fact(p, "providers", json::array())) {
    if (fact(x, "fits", false) || known(x, "name"))
      s += fmt::format("  {} name {} version {} {}\n", text(x, "file", ""), text(x, "name", "?"), fact(x, "interface_version", 0u),
                       fact(x, "fits", false) ? "fits" : "does not fit");
    else
      s += fmt::format("  {} cannot load: {}\n", text(x, "file", ""), text(x, "error", "?"));
  }
  s += "options:\n";
  for (const auto& o : p["options"])
    s += fmt::format("  {:<14} {:<8} {:<4} {}\n", fact(o, "option", std::string("")), fact(o, "value", std::string("")),
                     fact(o, "usable", false) ? "yes" : "no", fact(o, "why", std::string("")));
  return s;
}

}  // namespace ib_acme
