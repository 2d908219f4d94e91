#include "rping.hpp"

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"RDMA ping: checks RC connections, RDMA READ and RDMA WRITE between two hosts", "rping"};
  rping::options opt;
  rping::report report;
  fabric::cli::add_output_options(app, opt.out);
  rping::add_options(app, opt);
  return fabric::cli::run({.name = "rping",
                           .validate = [&] { rping::validate(opt); },
                           .body = [&](fabric::console& con) { return rping::run(opt, report, con); },
                           .render = [&](nlohmann::json& j) { rping::to_json(j, opt, report); }},
                          app, argc, argv, opt.out);
}
