#include "ib_acme.hpp"

#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"Test the ibacm service, generate its configuration files, probe which of its options fit this host",
               "ib_acme"};
  ib_acme::options opt;
  ib_acme::report report;
  fabric::cli::add_output_options(app, opt.out);
  ib_acme::add_options(app, opt);
  return fabric::cli::run({.name = "ib_acme",
                           .validate = [&] { ib_acme::validate(opt); },
                           .body = [&](fabric::console& con) { return ib_acme::run(opt, report, con); },
                           .render = [&](nlohmann::json& j) { ib_acme::to_json(j, opt, report); }},
                          app, argc, argv, opt.out);
}
