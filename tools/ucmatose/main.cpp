#include "ucmatose.hpp"

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"RDMA CM connection test: sets up many RC connections at once, exchanges messages, tears them down",
               "ucmatose"};
  ucmatose::options opt;
  ucmatose::report rep;
  fabric::cli::add_output_options(app, opt.out);
  ucmatose::add_options(app, opt);
  return fabric::cli::run({.name = "ucmatose",
                           .validate = [&] { ucmatose::validate(opt); },
                           .body = [&](fabric::console& con) { return ucmatose::run(opt, rep, con); },
                           .render = [&](nlohmann::json& j) { ucmatose::to_json(j, opt, rep); }},
                          app, argc, argv, opt.out);
}
