#pragma once
/// Where this process stands: the sweep's hosts, its rank among them (from
/// the options, Slurm or its own host name), and each host's RDMA address.

#include "fabric-sweep/options.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sweep {

/// Where this process stands: its rank among all hosts, and how that was found.
struct place {
  int rank = 0;
  std::vector<std::string> hosts;
  std::string source;  ///< "slurm", "hosts", "rank"
};

/// The environment as a map (for tests); from_environ() reads the process's.
using environment = std::map<std::string, std::string>;
environment from_environ();

/// The hosts from --hosts, else from the Slurm step's node list
/// (SLURM_STEP_NODELIST, else the job's; one task per node); the rank
/// from --rank, else our own host name's place in --hosts, else
/// SLURM_PROCID (srun's tasks each named in --hosts). A host named twice
/// is a usage error, as is anything it cannot tell.
place find_place(const run_options& o, const environment& env, const std::string& host_name);

/// "node01" of "node01.cluster": a host's name before its first dot.
std::string short_name(const std::string& host);

/// The place of `name` in `hosts`: the same name, else the same short name.
std::optional<int> host_index(const std::vector<std::string>& hosts, const std::string& name);

/// An address template (--address, an address of --rails) for `host`:
/// {host} replaced by its name, {short} by the name before its first dot.
std::string address_for(const std::string& address_template, const std::string& host);

/// Each host's RDMA address: from --address-file, else --address with
/// {host} replaced (and {short}, the name before its first dot).
std::vector<std::string> addresses(const run_options& o, const std::vector<std::string>& hosts);

}  // namespace sweep
