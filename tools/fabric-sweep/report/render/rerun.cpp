// The pairs to run again, as ClusterKit's custom mode reads them and as
// `fabric-sweep --pairs` does: `ROUND HOSTA HOSTB` lines, each host in at
// most one pair of a round (the re-tests' packing), so that an admin runs
// just those pairs with the launcher of the sweep.
#include "fabric-sweep/report/render/render.hpp"

#include "fabric/base/text.hpp"

#include <fmt/format.h>

namespace sweep {

std::string rerun_text(const matrix& m) {
  std::vector<rank_pair> bad;
  std::size_t unnamed = 0;
  // A name with a blank or a '#' would not read back as one word.
  auto word = [](const std::string& h) { return h.find_first_of(" \t\r\n#") == std::string::npos; };
  for (const auto& p : m.pairs)
    if (p.state == pair_state::slow || p.state == pair_state::failed) {
      if (word(m.hosts[p.a]) && word(m.hosts[p.b])) bad.emplace_back(static_cast<int>(p.a), static_cast<int>(p.b));
      else ++unnamed;
    }
  auto rounds = pack_rounds(std::move(bad));
  std::size_t pairs = 0;
  for (const auto& r : rounds) pairs += r.size();
  std::string out = fmt::format("# fabric-sweep report: the {} of --check {}, in {}\n",
                                fabric::counted(pairs, "slow or failed pair", "slow and failed pairs"), check_name(m.check),
                                fabric::counted(rounds.size(), "round"));
  out += "# run them again: fabric-sweep --pairs FILE, under the sweep's launcher\n";
  // The re-run's report judges by the bar they were found slow by.
  if (m.bar.value && m.bar.source != bar_source::ports) out += bar_line(m.check, *m.bar.value) + "\n";
  if (unnamed > 0)
    out += fmt::format("# {} left out: a host name with a blank or '#'\n", fabric::counted(unnamed, "pair"));
  for (std::size_t r = 0; r < rounds.size(); ++r)
    for (const auto& p : rounds[r])
      out += fmt::format("{} {} {}\n", r + 1, m.hosts[static_cast<std::size_t>(p.server)],
                         m.hosts[static_cast<std::size_t>(p.client)]);
  return out;
}

}  // namespace sweep
