#pragma once
/// fabric-sweep discover: the subnet read from this host's InfiniBand port
/// and written as one fabric document (document.hpp), for the report to
/// join to the pairs' verdicts.

#include "document.hpp"
#include "subnet.hpp"

#include "fabric-sweep/options.hpp"

#include "fabric/cli/console.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace sweep {

/// What a discover run found.
struct discover_report {
  std::optional<subnet::fabric> model;  ///< once the walk ended
  double elapsed_s = 0;
};

/// The subcommand's body: walks the subnet, writes -o FILE (whole or not
/// at all). Exit 1 when a node did not answer (the document names it and
/// is written all the same).
fabric::verdict discover(const options& opt, discover_report& rep, fabric::console& con);
/// The document's role, schema, options and summary; its results (one a
/// node) come from each_node.
void to_json(nlohmann::json& j, const options& opt, const discover_report& rep);
void each_node(const discover_report& rep, const fabric::result_sink& each);

/// What did not answer, one line each (nodes whose table or counters did
/// not, ports whose far node did not).
std::vector<std::string> unanswered_lines(const subnet::fabric& f);

}  // namespace sweep
