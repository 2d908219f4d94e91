#include "udaddy.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Unreliable datagrams over rdma_cm (SIDR): a server replies to each client message", "udaddy"};
  udaddy::options opt;
  udaddy::report rep;
  fabric::cli::add_output_options(app, opt.out);
  udaddy::add_options(app, opt);
  return fabric::cli::run("udaddy", app, argc, argv, opt.out, [&] { return udaddy::run(opt, rep); },
                          [&](nlohmann::json& j) { udaddy::to_json(j, rep); });
}
