#include "fabric/cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"mckey", "mckey"};
  fabric::cli::output_options out;
  fabric::cli::add_output_options(app, out);
  return fabric::cli::run("mckey", app, argc, argv, out,
                          [] () -> fabric::exit_code { throw fabric::error(fabric::exit_code::usage, "not implemented yet"); },
                          [](nlohmann::json& j) { j["role"] = "none"; });
}
