#pragma once
/// The parts of the ACM option probe (--probe), each in its own file: the
/// facts of this host (probe.cpp: its ports, their SA, the service), the
/// providers loaded one by one in a child process (providers.cpp), the
/// verdict on each ibacm option (verdicts.cpp), and the human table
/// (probe_table.cpp). The probe's JSON object is what they share.

#include "ib_acme.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ib_acme {

/// A fact of the probe's object: its value, or `otherwise` when it is
/// null (not known) or absent.
template <class T>
T fact(const nlohmann::json& j, const char* key, T otherwise) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? otherwise : it->template get<T>();
}
/// Whether a fact is known: present and not null.
inline bool known(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && !it->is_null();
}

/// Every local port, from verbs (MTU, state) and umad (SM, pkeys) together,
/// with whether the SA answers on it.
std::vector<nlohmann::json> collect_ports(const options& opt);

/// The service: its socket, its port file, whether it answers and how.
nlohmann::json probe_service(const options& opt);

/// Every provider library in --provider-path, each loaded in a child
/// process of its own.
nlohmann::json probe_providers(const options& opt);

/// Which ibacm option values can work here, and why, from the facts above.
nlohmann::json judge_options(const std::vector<nlohmann::json>& ports, const nlohmann::json& service,
                             const nlohmann::json& providers);

}  // namespace ib_acme
