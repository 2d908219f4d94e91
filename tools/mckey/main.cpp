#include "mckey.hpp"

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"Multicast over rdma_cm: join a group on UD QPs, then send to it or count what arrives", "mckey"};
  mckey::options opt;
  mckey::report report;
  fabric::cli::add_output_options(app, opt.out);
  mckey::add_options(app, opt);
  return fabric::cli::run({.name = "mckey",
                           .validate = [&] { mckey::validate(opt); },
                           .body = [&](fabric::console& con) { return mckey::run(opt, report, con); },
                           .render = [&](nlohmann::json& j) { mckey::to_json(j, opt, report); }},
                          app, argc, argv, opt.out);
}
