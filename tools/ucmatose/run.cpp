// A run from start to verdict: the side, its flow, then the report's
// events and lines.
#include "ucmatose.hpp"

#include "client.hpp"
#include "server.hpp"

#include <memory>

namespace ucmatose {

fabric::verdict run(const options& opt, report& r, fabric::console& con) {
  r.role = opt.client() ? "client" : "server";
  r.messages = static_cast<std::uint64_t>(opt.messages());
  r.wanted = static_cast<std::size_t>(opt.connections);
  con.set_role(r.role);
  for (const auto& w : opt.warnings) con.warning(w);
  fabric::verdict v;
  try {
    std::unique_ptr<session> s;
    if (opt.client())
      s = std::make_unique<client>(opt, r, con);
    else
      s = std::make_unique<server>(opt, r, con);
    s->run();
    v = s->verdict();
  } catch (const fabric::error& e) {
    v = {e.code(), e.what()};
  }
  // Every connection is final now, whatever ended the run.
  try {
    for (std::size_t i = 0; i < r.connections.size(); ++i) con.event("result", [&] { return result_json(r, i); });
    if (opt.stats)
      for (const auto& line : format_stats(r)) con.line(line);
    con.test_end(v.code);
  } catch (const fabric::error& e) {
    if (v.ok()) v = {e.code(), e.what()};
  }
  return v;
}

}  // namespace ucmatose
