#include "sweep.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Check every pair of hosts of a cluster in rounds, launched by srun, clush or pdsh; "
               "'fabric-sweep report' merges every host's output into one matrix",
               "fabric-sweep"};
  sweep::options opt;
  sweep::run_report ran;
  sweep::matrix merged;
  fabric::cli::add_output_options(app, opt.out);
  sweep::add_options(app, opt);
  return fabric::cli::run(
      {.name = "fabric-sweep",
       .validate = [&] { sweep::validate(opt); },
       .body = [&](fabric::console& con) { return opt.reporting ? sweep::report(opt, merged, con) : sweep::run(opt, ran, con); },
       .render = [&](nlohmann::json& j) { opt.reporting ? sweep::to_json(j, opt, merged) : sweep::to_json(j, opt, ran); }},
      app, argc, argv, opt.out);
}
