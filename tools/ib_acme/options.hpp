#pragma once
/// ib_acme's command line: the options, their checks as a whole (as the
/// original's), and the user --service-user names.

#include "fabric/acm/acm.hpp"
#include "fabric/cli/cli.hpp"
#include "fabric/base/wait_limit.hpp"

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

namespace ib_acme {

/// What -P asks for.
enum class perf_mode { none, row, col, index, all, source };

/// Command-line options (the original's short flags, uniform long names).
struct options {
  char format = 'u';                  ///< -f i|n|l|g (u: guess per destination)
  std::string source;                 ///< -s, range syntax
  std::string dest;                   ///< -d, range syntax
  bool verify = false;                ///< -v
  bool cache_only = false;            ///< -c
  bool endpoints = false;             ///< -e
  int ep_index = 0;                   ///< -e N (also the index of -P N, as in the original)
  perf_mode perf = perf_mode::none;   ///< -P
  std::string service = std::string(fabric::acm::default_unix_path);  ///< -S, range syntax
  int count = 1;                      ///< -C repetitions
  bool make_addr = false;             ///< -A
  std::string addr_file = "ibacm_addr.cfg";
  bool make_opts = false;             ///< -O
  std::string opts_file = "ibacm_opts.cfg";
  std::string dir = "/etc/rdma";      ///< -D
  bool verbose = false;               ///< -V
  bool stats = false;                 ///< --stats
  bool probe = false;                 ///< --probe
  std::string provider_path = "/usr/lib/x86_64-linux-gnu/ibacm";  ///< --provider-path
  std::string port_file = std::string(fabric::acm::default_port_file);  ///< --port-file
  std::string service_user;           ///< --service-user: one more user trusted to run the service
  fabric::wait_limit timeout{std::chrono::milliseconds(5000)};  ///< --timeout
  fabric::cli::output_options out;
};

/// Declares every option on `app`.
void add_options(CLI::App& app, options& opt);

/// Checks the combination of options as the original does; throws
/// fabric::error(usage).
void validate(const options& opt);

/// The uid --service-user names (a user name or a number); empty when not
/// given. Throws a usage error for an unknown user.
std::optional<uid_t> service_user_uid(const options& opt);

}  // namespace ib_acme
