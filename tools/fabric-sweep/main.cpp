#include "fabric-sweep/health/health.hpp"
#include "fabric-sweep/report/report.hpp"
#include "fabric-sweep/rank/run.hpp"

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"Check every pair of hosts of a cluster in rounds, launched by srun, clush or pdsh; "
               "'fabric-sweep report' merges every host's output into one matrix; "
               "'fabric-sweep health' checks this host alone",
               "fabric-sweep"};
  sweep::options opt;
  sweep::run_report ran;
  sweep::matrix merged;
  sweep::health_report checked;
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
               default: return sweep::run(opt, ran, con);
             }
           },
       .render =
           [&](nlohmann::json& j) {
             switch (opt.mode) {
               case sweep::mode::report: return sweep::to_json(j, opt, merged);
               case sweep::mode::health: return sweep::to_json(j, opt, checked);
               default: return sweep::to_json(j, opt, ran);
             }
           }},
      app, argc, argv, opt.out,
      // A report's pairs are written one at a time: a million of them are
      // never one JSON value.
      [&](const fabric::result_sink& each) { sweep::each_result(merged, each); });
}
