#include "fabric-sweep/discover/discover.hpp"
#include "fabric-sweep/health/health.hpp"
#include "fabric-sweep/report/report.hpp"
#include "fabric-sweep/rank/run.hpp"

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"Check every pair of hosts of a cluster in rounds, launched by srun, clush or pdsh; "
               "'fabric-sweep report' merges every host's output into one matrix; "
               "'fabric-sweep health' checks this host alone; "
               "'fabric-sweep discover' reads the InfiniBand subnet's nodes, links, tables and counters",
               "fabric-sweep"};
  sweep::options opt;
  sweep::run_report ran;
  sweep::matrix merged;
  sweep::health_report checked;
  sweep::discover_report found;
  fabric::cli::add_output_options(app, opt.out);
  sweep::add_options(app, opt);
  return fabric::cli::run(
      {.name = "fabric-sweep",
       .validate = [&] { sweep::validate(opt); },
       .body =
           [&](fabric::console& con) {
             switch (opt.mode) {
               case sweep::mode::report: return sweep::report(opt, merged, con);
               case sweep::mode::health: return sweep::health(opt, checked, con);
               case sweep::mode::discover: return sweep::discover(opt, found, con);
               default: return sweep::run(opt, ran, con);
             }
           },
       .render =
           [&](nlohmann::json& j) {
             switch (opt.mode) {
               case sweep::mode::report: return sweep::to_json(j, opt, merged);
               case sweep::mode::health: return sweep::to_json(j, opt, checked);
               case sweep::mode::discover: return sweep::to_json(j, opt, found);
               default: return sweep::to_json(j, opt, ran);
             }
           }},
      app, argc, argv, opt.out,
      // A report's pairs, and a fabric's nodes, are written one at a time:
      // a million of them are never one JSON value.
      [&](const fabric::result_sink& each) {
        if (opt.mode == sweep::mode::discover) return sweep::each_node(found, each);
        sweep::each_result(merged, each);
      });
}
