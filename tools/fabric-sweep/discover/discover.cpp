// The discover subcommand: the walk, its document and its lines for people.
#include "discover.hpp"

#include "walk.hpp"

#include "fabric/base/files.hpp"
#include "fabric/cli/cli.hpp"
#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>

#include <chrono>

namespace sweep {

using fabric::exit_code;

std::vector<std::string> unanswered_lines(const subnet::fabric& f) {
  std::vector<std::string> out;
  for (const auto& s : f.silent) out.push_back(s.error);
  for (const auto& n : f.nodes)
    if (!n.error.empty()) out.push_back(fmt::format("{} ({}): {}", subnet::node_name(n), subnet::guid_text(n.guid), n.error));
  return out;
}

namespace {

fabric::verdict judge(const subnet::fabric& f) {
  auto silent = unanswered_lines(f);
  if (silent.empty()) return {};
  return {exit_code::test_failed,
          fmt::format("{} did not answer{}: {}", silent.size() == 1 ? "a node" : fmt::format("{} nodes", silent.size()),
                      silent.size() == 1 ? "" : ", the first", silent.front())};
}

nlohmann::json head(const options& opt, const fabric::verdict& v) {
  auto doc = fabric::cli::make_document("fabric-sweep", v);
  doc["schema"] = subnet::document_schema;
  doc["role"] = "discover";
  doc["options"] = options_json(opt);
  return doc;
}

}  // namespace

fabric::verdict discover(const options& opt, discover_report& rep, fabric::console& con) {
  con.set_role("discover");
  con.set_schema(subnet::document_schema);
  const auto& d = opt.discover;
  subnet::walk_options w;
  w.device = d.ca;
  w.port = d.port.value_or(0);
  w.timeout = std::chrono::milliseconds(d.timeout_ms);
  w.counters = !d.no_counters;
  auto t0 = std::chrono::steady_clock::now();
  rep.model = subnet::walk(w, [&](std::string_view line) { con.diagnostic(fmt::format("fabric-sweep discover: {}", line)); });
  rep.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto& f = *rep.model;
  auto v = judge(f);
  if (!d.output.empty()) fabric::write_file_atomically(d.output, subnet::document_text(head(opt, v), f));

  for (std::size_t i = 0; i < f.nodes.size(); ++i)
    con.event("result", [&] { return subnet::node_json(f.nodes[i], i); });
  auto summary = subnet::summary_json(f);
  con.line(fmt::format("subnet from {} port {} (LID {}): {} nodes ({} switches, {} channel adapters), {} links, in {:.1f} s",
                       fabric::printable(f.device), f.port, f.from_lid, f.nodes.size(), summary["switches"].get<std::size_t>(),
                       summary["channel_adapters"].get<std::size_t>(), summary["links"].get<std::size_t>(), rep.elapsed_s));
  for (const auto& line : unanswered_lines(f)) con.line("did not answer: " + line);
  if (!d.output.empty()) con.line(fmt::format("written to {}", fabric::printable(d.output)));
  return v;
}

void to_json(nlohmann::json& j, const options& opt, const discover_report& rep) {
  j["schema"] = subnet::document_schema;
  j["role"] = "discover";
  j["options"] = options_json(opt);
  j["summary"] = rep.model ? subnet::summary_json(*rep.model) : nlohmann::json::object();
  if (!rep.model) j["results"] = nlohmann::json::array();
}

void each_node(const discover_report& rep, const fabric::result_sink& each) {
  if (!rep.model) return;
  for (std::size_t i = 0; i < rep.model->nodes.size(); ++i) each(subnet::node_json(rep.model->nodes[i], i));
}

}  // namespace sweep
