#include "fabric/ud_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace fabric {

bool ud_result::fail(const fabric::error& e) {
  if (state == "failed") return false;
  state = "failed";
  error = e.what();
  return true;
}

std::vector<std::string> loss_lines(std::string_view who, const ud_result& r) {
  std::vector<std::string> lines;
  if (r.lost() > 0)
    lines.push_back(fmt::format("{} {}: received {} of {} messages, {} lost", who, r.index, r.received, r.expected,
                                r.lost()));
  if (r.verify_errors > 0) lines.push_back(fmt::format("{} {}: {} messages failed verification", who, r.index, r.verify_errors));
  return lines;
}

std::pair<exit_code, std::string> loss_verdict(const ud_totals& t) {
  if (t.lost > 0)
    return {exit_code::test_failed, fmt::format("lost {} of {} messages: received {}", t.lost, t.expected, t.received)};
  if (t.verify_errors > 0) return {exit_code::test_failed, fmt::format("{} messages failed verification", t.verify_errors)};
  return {exit_code::ok, {}};
}

namespace {
template <class Counts>
void put_counts(nlohmann::json& j, const Counts& c, std::uint64_t lost, ud_counts_shown shown) {
  if (shown.sent) j["sent"] = c.sent;
  if (shown.received) {
    j["received"] = c.received;
    j["expected"] = c.expected;
    j["lost"] = lost;
  }
  if (shown.verify) j["verify_errors"] = c.verify_errors;
}
}  // namespace

void to_json(nlohmann::json& j, const ud_result& r, ud_counts_shown shown) {
  j["index"] = r.index;
  j["state"] = r.state;
  if (!r.error.empty()) j["error"] = r.error;
  if (r.qpn) j["qpn"] = *r.qpn;
  if (r.remote_qpn) j["remote_qpn"] = *r.remote_qpn;
  if (r.qkey) j["qkey"] = *r.qkey;
  put_counts(j, r, r.lost(), shown);
}

void add_totals(nlohmann::json& j, const ud_totals& t, ud_counts_shown shown) { put_counts(j, t, t.lost, shown); }

}  // namespace fabric
