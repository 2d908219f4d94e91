// The host's RC ping-pongs with itself: over its own address, and from
// each of its rails to each other one. Both sides of each run here, each
// in a thread of its own.
#include "fabric-sweep/health/health.hpp"
#include "fabric-sweep/rank/intra.hpp"

#include "fabric/base/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <functional>

namespace sweep {

void ping_host(const options& opt, const std::string& host, health_report& rep) {
  if (!opt.health.no_intra) {
    auto on = rails(rep);
    for (std::size_t i = 0; i < on.size(); ++i)
      for (std::size_t j = i + 1; j < on.size(); ++j) rep.rail_pairs.push_back({on[i], on[j], {}});
  }
  if (opt.run.port + rep.rail_pairs.size() > 65535)
    fabric::cli::usage_error(fmt::format("--port {}: the rail pairs take the ports above it, up to {}, past 65535",
                                         opt.run.port, opt.run.port + rep.rail_pairs.size()));
  // All at once, as the rails would work: a dead rail costs one wait, not
  // one for each of its pairs, and the whole check stays within a node
  // health checker's time.
  rep.self = pair_result{};
  auto plan = [&](std::string from, std::string to, int port) {
    self_ping p;
    p.from = std::move(from);
    p.to = std::move(to);
    p.port = port;
    p.size = static_cast<std::uint32_t>(pair_size(opt.run));
    p.count = static_cast<std::uint64_t>(pair_count(opt.run).value_or(100));
    return p;
  };
  // Slot 0 the self-connection, slot k + 1 rail pair k; a pair that cannot
  // be tried has nothing to run.
  std::vector<std::function<void()>> slots(rep.rail_pairs.size() + 1);
  slots[0] = [&, p = plan({}, rep.address, opt.run.port)] { *rep.self = ping_self(opt.run, host, p); };
  for (std::size_t k = 0; k < rep.rail_pairs.size(); ++k) {
    auto& pair = rep.rail_pairs[k];
    const auto &from = rep.ports[pair.from], &to = rep.ports[pair.to];
    auto port = opt.run.port + 1 + static_cast<int>(k);
    if (from.address.empty() || to.address.empty()) {
      const auto& lacking = from.address.empty() ? from : to;
      pair.result.server = pair.result.client = host;
      pair.result.port = port;
      pair.result.error = lacking.netdev.empty()
                              ? fmt::format("{} port {} has no network device", fabric::printable(lacking.info.device),
                                            lacking.info.port)
                              : fmt::format("{} port {} has no address on {}", fabric::printable(lacking.info.device),
                                            lacking.info.port, fabric::printable(lacking.netdev));
      continue;
    }
    slots[k + 1] = [&, p = plan(from.address, to.address, port)] { pair.result = ping_self(opt.run, host, p); };
  }
  auto ended = all_at_once(slots.size(), [&slots](std::size_t i) {
    if (slots[i]) slots[i]();
  });
  // What ended the run (Ctrl-C) ends it here too; a ping-pong it cut short
  // has no outcome.
  auto first = std::find_if(ended.begin(), ended.end(), [](const std::exception_ptr& e) { return e != nullptr; });
  if (first == ended.end()) return;
  if (ended[0]) rep.self.reset();
  for (std::size_t k = 0; k < rep.rail_pairs.size(); ++k)
    if (ended[k + 1]) rep.rail_pairs[k].result.error = "the check did not finish";
  std::rethrow_exception(*first);
}

}  // namespace sweep
