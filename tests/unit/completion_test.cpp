#include "fabric/completion.hpp"

#include <gtest/gtest.h>

namespace {
struct sample_app {
  std::string port_space, device;
  int count = 0;
  bool verbose = false;
  CLI::App app{"sample", "sample"};
  sample_app() {
    app.add_option("-P,--port-space", port_space, "Port space")->check(CLI::IsMember({"udp", "ipoib"}));
    app.add_option("-d,--device", device, "RDMA device")->type_name(std::string(fabric::completion::device_type));
    app.add_option("-C,--count", count, "Messages");
    app.add_flag("-v,--verbose", verbose, "Print more");
  }
};
}  // namespace

TEST(completion, bash_lists_every_option_and_known_values) {
  sample_app s;
  auto script = fabric::completion::bash_script("sample", s.app);
  for (const char* opt : {"-P", "--port-space", "-d", "--device", "-C", "--count", "-v", "--verbose", "--help"})
    EXPECT_NE(script.find(opt), std::string::npos) << opt;
  EXPECT_NE(script.find("compgen -W 'udp ipoib'"), std::string::npos);
  EXPECT_NE(script.find("/sys/class/infiniband"), std::string::npos);
  EXPECT_NE(script.find("complete -F _fabric_sample sample"), std::string::npos);
  // A value option completes nothing rather than offering option names.
  EXPECT_NE(script.find("-C|--count)\n      return"), std::string::npos);
}

TEST(completion, zsh_uses_arguments_with_descriptions) {
  sample_app s;
  auto script = fabric::completion::zsh_script("sample", s.app);
  EXPECT_EQ(script.rfind("#compdef sample\n", 0), 0u);
  EXPECT_NE(script.find("'(-P --port-space)'{-P,--port-space}'[Port space]:value:(udp ipoib)'"), std::string::npos);
  EXPECT_NE(script.find("'(-v --verbose)'{-v,--verbose}'[Print more]'"), std::string::npos);
}
