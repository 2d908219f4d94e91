// Where this process stands: the sweep's hosts, its rank among them, and
// each host's RDMA address.
#include "fabric-sweep/rank/place.hpp"

#include "fabric/base/text.hpp"
#include "fabric/cli/console.hpp"
#include "fabric/cli/hostlist.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

extern char** environ;

namespace sweep {

environment from_environ() {
  environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

std::string short_name(const std::string& host) { return host.substr(0, host.find('.')); }

std::optional<int> host_index(const std::vector<std::string>& hosts, const std::string& name) {
  auto it = std::find(hosts.begin(), hosts.end(), name);
  if (it == hosts.end())
    it = std::find_if(hosts.begin(), hosts.end(), [&](const std::string& h) { return short_name(h) == short_name(name); });
  if (it == hosts.end()) return std::nullopt;
  return static_cast<int>(it - hosts.begin());
}

namespace {

std::optional<int> number(const environment& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  auto v = fabric::whole_number<int>(it->second);
  if (!v) fabric::cli::usage_error(fmt::format("{}={}: not a number", name, fabric::printable(it->second)));
  return v;
}

/// The node list of the step srun started (a part of the allocation, or
/// all of it), else the job's.
const std::string* slurm_nodes(const environment& env) {
  for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"})
    if (auto it = env.find(name); it != env.end()) return &it->second;
  return nullptr;
}

void refuse_duplicates(const std::vector<std::string>& hosts, std::string_view from) {
  std::set<std::string_view> seen;
  for (const auto& h : hosts)
    if (!seen.insert(h).second)
      fabric::cli::usage_error(fmt::format("{}: {} is named twice; every host of a sweep is one rank", from, fabric::printable(h)));
}

}  // namespace

place find_place(const run_options& o, const environment& env, const std::string& host_name) {
  place p;
  auto procid = number(env, "SLURM_PROCID");
  auto ntasks = number(env, "SLURM_NTASKS");
  if (!o.hosts.empty()) {
    p.hosts = fabric::expand_hostlist(o.hosts);
    refuse_duplicates(p.hosts, "--hosts");
    if (o.rank) {
      p.rank = *o.rank;
      p.source = "rank";
    } else if (auto mine = host_index(p.hosts, host_name)) {
      p.rank = *mine;
      p.source = "hosts";
    } else if (procid && ntasks && static_cast<std::size_t>(*ntasks) == p.hosts.size()) {
      // Several ranks a node under srun, each named in --hosts: the task's place.
      p.rank = *procid;
      p.source = "slurm";
    } else {
      fabric::cli::usage_error(fmt::format("this host ({}) is not in --hosts; give --rank", fabric::printable(host_name)));
    }
  } else {
    const auto* list = slurm_nodes(env);
    if (!procid || !ntasks || !list)
      fabric::cli::usage_error("no host list: give --hosts, or run under srun (SLURM_PROCID, SLURM_NTASKS, SLURM_STEP_NODELIST)");
    p.hosts = fabric::expand_hostlist(*list);
    refuse_duplicates(p.hosts, "Slurm's node list");
    if (static_cast<std::size_t>(*ntasks) != p.hosts.size())
      fabric::cli::usage_error(fmt::format("{} tasks on {} nodes: run one task per node (srun --ntasks-per-node=1), "
                                           "or name every task in --hosts",
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
    std::error_code ec;
    if (std::filesystem::is_directory(o.address_file, ec))
      fabric::cli::usage_error(fmt::format("--address-file {}: cannot read it: a directory", fabric::printable(o.address_file)));
    if (!in) fabric::cli::usage_error(fmt::format("--address-file {}: cannot read it", fabric::printable(o.address_file)));
    std::map<std::string, std::string> table;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string host, addr;
      if (!(words >> host) || host.front() == '#') continue;
      if (!(words >> addr)) fabric::cli::usage_error(fmt::format("--address-file: '{}' has no address", fabric::printable(host)));
      table[host] = addr;
    }
    for (const auto& h : hosts) {
      auto it = table.find(h);
      if (it == table.end()) it = table.find(short_name(h));
      if (it == table.end()) fabric::cli::usage_error(fmt::format("--address-file: no address for {}", fabric::printable(h)));
      out.push_back(it->second);
    }
    return out;
  }
  for (const auto& h : hosts) out.push_back(address_for(o.address, h));
  return out;
}

std::string address_for(const std::string& address_template, const std::string& host) {
  std::string a = address_template;
  for (auto [key, value] : {std::pair<std::string_view, std::string>{"{host}", host}, {"{short}", short_name(host)}})
    for (auto at = a.find(key); at != std::string::npos; at = a.find(key, at + value.size())) a.replace(at, key.size(), value);
  return a;
}

}  // namespace sweep
