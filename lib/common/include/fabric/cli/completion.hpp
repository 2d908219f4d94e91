#pragma once
/// Shell completion scripts generated from a tool's own CLI definition, so
/// they cannot drift from its options.
///
/// Value hints come from an option's type name: a validator set such as
/// CLI::IsMember({"udp", "ipoib"}) completes those words, and the type
/// names below complete from the system.

#include "fabric/cli/cli.hpp"

#include <string>
#include <string_view>

namespace fabric::completion {

inline constexpr std::string_view device_type = "DEVICE";  ///< RDMA devices from /sys/class/infiniband
inline constexpr std::string_view host_type = "HOST";      ///< host names and addresses
inline constexpr std::string_view file_type = "FILE";      ///< paths
inline constexpr std::string_view dir_type = "DIR";        ///< directories

/// The bash completion script for `tool`.
std::string bash_script(std::string_view tool, const CLI::App& app);

/// The zsh completion script (#compdef) for `tool`.
std::string zsh_script(std::string_view tool, const CLI::App& app);

}  // namespace fabric::completion
