#include "udaddy.hpp"

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"Unreliable datagrams over rdma_cm (SIDR): a server replies to each client message", "udaddy"};
  udaddy::options opt;
  udaddy::report report;
  fabric::cli::add_output_options(app, opt.out);
  udaddy::add_options(app, opt);
  return fabric::cli::run({.name = "udaddy",
                           .validate = [&] { udaddy::validate(opt); },
                           .body = [&](fabric::console& con) { return udaddy::run(opt, report, con); },
                           .render = [&](nlohmann::json& j) { udaddy::to_json(j, opt, report); }},
                          app, argc, argv, opt.out);
}
