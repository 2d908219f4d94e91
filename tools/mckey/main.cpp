#include "mckey.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Multicast over rdma_cm: join a group on UD QPs, then send to it or count what arrives", "mckey"};
  mckey::options opt;
  mckey::report rep;
  fabric::cli::add_output_options(app, opt.out);
  mckey::add_options(app, opt);
  return fabric::cli::run("mckey", app, argc, argv, opt.out, [&] { return mckey::run(opt, rep); },
                          [&](nlohmann::json& j) { mckey::to_json(j, rep); });
}
