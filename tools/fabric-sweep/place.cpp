// Who meets whom in which round, and where this process stands.
#include "sweep.hpp"

#include "fabric/hostlist.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

extern char** environ;

namespace sweep {

std::vector<std::vector<pairing>> rounds(int n) {
  std::vector<std::vector<pairing>> out;
  if (n < 2) return out;
  // The circle method: rank 0 stays, the others turn one place a round;
  // with n odd, a phantom rank n gives its partner the bye.
  int m = n % 2 == 0 ? n : n + 1;
  std::vector<int> ring(static_cast<std::size_t>(m));
  for (int r = 0; r < m - 1; ++r) {
    ring[0] = 0;
    for (int k = 1; k < m; ++k) ring[static_cast<std::size_t>(k)] = (k - 1 + r) % (m - 1) + 1;
    std::vector<pairing> round;
    for (int i = 0; i < m / 2; ++i) {
      int a = ring[static_cast<std::size_t>(i)], b = ring[static_cast<std::size_t>(m - 1 - i)];
      if (a >= n || b >= n) continue;  // the bye
      round.push_back({std::min(a, b), std::max(a, b), 0});
    }
    std::sort(round.begin(), round.end(), [](const pairing& x, const pairing& y) { return x.server < y.server; });
    for (std::size_t s = 0; s < round.size(); ++s) round[s].slot = static_cast<int>(s);
    out.push_back(std::move(round));
  }
  return out;
}

int port_cycle(int base, int n) { return (65536 - base) / std::max(1, n / 2); }

int pair_port(int base, int n, int round, const pairing& p) {
  return base + (round % std::max(1, port_cycle(base, n))) * std::max(1, n / 2) + p.slot;
}

environment from_environ() {
  environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

namespace {

std::optional<int> number(const environment& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  int v = -1;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec != std::errc() || p != it->second.data() + it->second.size() || v < 0)
    fabric::cli::usage_error(fmt::format("{}={}: not a number", name, it->second));
  return v;
}

std::string short_name(const std::string& host) { return host.substr(0, host.find('.')); }

}  // namespace

place find_place(const run_options& o, const environment& env, const std::string& host_name) {
  place p;
  if (!o.hosts.empty()) {
    p.hosts = fabric::expand_hostlist(o.hosts);
    if (o.rank) {
      p.rank = *o.rank;
      p.source = "rank";
    } else {
      auto it = std::find_if(p.hosts.begin(), p.hosts.end(), [&](const std::string& h) {
        return h == host_name || short_name(h) == short_name(host_name);
      });
      if (it == p.hosts.end())
        fabric::cli::usage_error(fmt::format("this host ({}) is not in --hosts; give --rank", host_name));
      p.rank = static_cast<int>(it - p.hosts.begin());
      p.source = "hosts";
    }
  } else {
    auto procid = number(env, "SLURM_PROCID");
    auto ntasks = number(env, "SLURM_NTASKS");
    auto list = env.find("SLURM_JOB_NODELIST");
    if (list == env.end()) list = env.find("SLURM_NODELIST");
    if (!procid || !ntasks || list == env.end())
      fabric::cli::usage_error("no host list: give --hosts, or run under srun (SLURM_PROCID, SLURM_NTASKS, SLURM_JOB_NODELIST)");
    p.hosts = fabric::expand_hostlist(list->second);
    if (static_cast<std::size_t>(*ntasks) != p.hosts.size())
      fabric::cli::usage_error(fmt::format("{} tasks on {} nodes: run one task per node (srun --ntasks-per-node=1)",
                                           *ntasks, p.hosts.size()));
    p.rank = o.rank.value_or(*procid);
    p.source = o.rank ? "rank" : "slurm";
  }
  if (p.hosts.size() < 2) fabric::cli::usage_error("a sweep needs at least two hosts");
  if (p.rank < 0 || static_cast<std::size_t>(p.rank) >= p.hosts.size())
    fabric::cli::usage_error(fmt::format("rank {} is not one of the {} hosts", p.rank, p.hosts.size()));
  return p;
}

std::vector<std::string> addresses(const run_options& o, const std::vector<std::string>& hosts) {
  std::vector<std::string> out;
  if (!o.address_file.empty()) {
    std::ifstream in(o.address_file);
    if (!in) fabric::cli::usage_error(fmt::format("--address-file {}: cannot read it", o.address_file));
    std::map<std::string, std::string> table;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string host, addr;
      if (!(words >> host) || host.front() == '#') continue;
      if (!(words >> addr)) fabric::cli::usage_error(fmt::format("--address-file: '{}' has no address", host));
      table[host] = addr;
    }
    for (const auto& h : hosts) {
      auto it = table.find(h);
      if (it == table.end()) it = table.find(short_name(h));
      if (it == table.end()) fabric::cli::usage_error(fmt::format("--address-file: no address for {}", h));
      out.push_back(it->second);
    }
    return out;
  }
  for (const auto& h : hosts) {
    std::string a = o.address;
    for (auto [key, value] : {std::pair<std::string_view, std::string>{"{host}", h}, {"{short}", short_name(h)}})
      for (auto at = a.find(key); at != std::string::npos; at = a.find(key, at + value.size()))
        a.replace(at, key.size(), value);
    out.push_back(a);
  }
  return out;
}

}  // namespace sweep
