#include "ucmatose.hpp"

int main(int argc, char** argv) {
  CLI::App app{"RDMA CM connection test: sets up many RC connections at once, exchanges messages, tears them down",
               "ucmatose"};
  ucmatose::options opt;
  ucmatose::report report;
  fabric::cli::add_output_options(app, opt.out);
  ucmatose::add_options(app, opt);
  return fabric::cli::run("ucmatose", app, argc, argv, opt.out,
                          [&] { return ucmatose::run(opt, report); },
                          [&](nlohmann::json& j) { ucmatose::to_json(j, report); });
}
