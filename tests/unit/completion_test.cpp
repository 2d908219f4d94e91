#include "fabric/cli/completion.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

namespace {
struct sample_app {
  std::string port_space, device, format, perf;
  int count = 0;
  bool verbose = false;
  CLI::App app{"sample", "sample"};
  sample_app() {
    app.add_option("-p,--port-space", port_space, "Port space")->check(CLI::IsMember({"udp", "ipoib"}));
    app.add_option("-d,--device", device, "RDMA device")->type_name(std::string(fabric::completion::device_type));
    app.add_option("-C,--count", count, "Messages");
    app.add_option("-f,--format", format, "Address format")->type_name("i|n|l|g");
    app.add_option("-P,--perf", perf, "Counters")->type_name("[col|N|all|s]");
    app.add_flag("-v,--verbose", verbose, "Print more");
  }
};
}  // namespace

TEST(completion, bash_lists_every_option_and_known_values) {
  sample_app s;
  auto script = fabric::completion::bash_script("sample", s.app);
  for (const char* opt : {"-p", "--port-space", "-d", "--device", "-C", "--count", "-v", "--verbose", "--help"})
    EXPECT_NE(script.find(opt), std::string::npos) << opt;
  EXPECT_NE(script.find("compgen -W 'udp ipoib'"), std::string::npos);
  EXPECT_NE(script.find("/sys/class/infiniband"), std::string::npos);
  EXPECT_NE(script.find("complete -F _fabric_sample sample"), std::string::npos);
  // Alternatives in a type name are values; upper-case placeholders are not.
  EXPECT_NE(script.find("compgen -W 'i n l g'"), std::string::npos);
  EXPECT_NE(script.find("compgen -W 'col all s'"), std::string::npos);
  // A value option completes nothing rather than offering option names.
  EXPECT_NE(script.find("-C|--count)\n      return"), std::string::npos);
}

TEST(completion, zsh_uses_arguments_with_descriptions) {
  sample_app s;
  auto script = fabric::completion::zsh_script("sample", s.app);
  EXPECT_EQ(script.rfind("#compdef sample\n", 0), 0u);
  EXPECT_NE(script.find("'(-p --port-space)'{-p,--port-space}'[Port space]:value:(udp ipoib)'"), std::string::npos);
  EXPECT_NE(script.find("'(-v --verbose)'{-v,--verbose}'[Print more]'"), std::string::npos);
}

TEST(completion, subcommands_and_their_options_are_offered) {
  CLI::App app{"tool", "tool"};
  std::string html, prom;
  bool verbose = false;
  app.add_flag("-v", verbose, "Print more");
  auto* report = app.add_subcommand("report", "Merge");
  report->add_option("--html", html, "Page")->type_name(std::string(fabric::completion::file_type));
  report->add_option("--prometheus", prom, "Gauges")->type_name(std::string(fabric::completion::file_type));
  auto* health = app.add_subcommand("health", "One host");
  health->add_option("--prometheus", prom, "Gauges")->type_name(std::string(fabric::completion::file_type));
  auto bash = fabric::completion::bash_script("tool", app);
  EXPECT_NE(bash.find("compgen -W 'report health -h --help -v --html --prometheus'"), std::string::npos) << bash;
  EXPECT_NE(bash.find("--html)\n      COMPREPLY=($(compgen -f"), std::string::npos);
  auto zsh = fabric::completion::zsh_script("tool", app);
  EXPECT_NE(zsh.find("'1:command:(report health)'"), std::string::npos) << zsh;
  EXPECT_EQ(zsh.find("--prometheus"), zsh.rfind("--prometheus")) << "an option shared by two subcommands, once";
}
