// The connection table's bookkeeping: steps, outcomes, the setup window.
#include "connections.hpp"

#include "fabric/cli/json_values.hpp"

#include <algorithm>
#include <cstdint>

namespace ucmatose {

using fabric::clock;

connection_table::connection_table(report& r, fabric::console& con, bool timed) : r_(r), con_(con), timed_(timed) {}

std::size_t connection_table::add(rdma_cm_id* id, std::string peer, conn_state st) {
  std::size_t i = conns_.size();
  // The context holds index + 1, so that an untagged id reads as none.
  id->context = reinterpret_cast<void*>(static_cast<std::uintptr_t>(i + 1));
  auto& c = conns_.emplace_back();
  c.id = id;
  c.st = st;
  r_.connections.emplace_back().peer = std::move(peer);
  return i;
}

std::optional<std::size_t> connection_table::index_of(const rdma_cm_id* id) noexcept {
  if (id == nullptr || id->context == nullptr) return std::nullopt;
  return reinterpret_cast<std::uintptr_t>(id->context) - 1;
}

void connection_table::reserve(std::size_t n) {
  conns_.reserve(n);
  r_.connections.reserve(n);
}

clock::time_point connection_table::stamp() const { return timed_ ? clock::now() : clock::time_point{}; }

void connection_table::start(std::size_t i, step s, clock::time_point at) {
  conns_[i].started[static_cast<std::size_t>(s)] = at;
}

void connection_table::finish(std::size_t i, step s, clock::time_point at) {
  auto k = static_cast<std::size_t>(s);
  if (!timed_ || conns_[i].started[k] == clock::time_point{}) return;
  result(i).step_us[k] = fabric::us_between(conns_[i].started[k], at);
}

void connection_table::record(std::size_t i, step s, double us) {
  if (timed_) result(i).step_us[static_cast<std::size_t>(s)] = us;
}

void connection_table::establish(std::size_t i, clock::time_point at) {
  auto& c = conns_[i];
  if (c.st == conn_state::failed) return;
  if (c.st != conn_state::established && pending_ > 0) --pending_;
  c.st = conn_state::established;
  result(i).established = true;
  last_established_ = at;
  con_.event("connected", [&] {
    return nlohmann::json{{"index", i},
                          {"peer", result(i).peer},
                          {"connect_us", fabric::value_or_null(result(i).step_us[static_cast<std::size_t>(step::connect)])}};
  });
}

void connection_table::fail(std::size_t i, const std::string& why, fabric::exit_code code) {
  auto& c = conns_[i];
  if (c.st != conn_state::established && c.st != conn_state::failed && pending_ > 0) --pending_;
  if (c.st != conn_state::established) c.st = conn_state::failed;
  if (result(i).error.empty()) result(i).error = why;
  fail_run(why, code);
}

void connection_table::fail_run(const std::string& why, fabric::exit_code code) {
  if (first_failure_) return;
  first_failure_ = code;
  first_failure_what_ = why;
}

std::optional<fabric::error> connection_table::first_failure() const {
  if (!first_failure_) return std::nullopt;
  return fabric::error(*first_failure_, first_failure_what_);
}

bool connection_table::setup_failed() const {
  return std::any_of(conns_.begin(), conns_.end(), [](const connection& c) { return c.st == conn_state::failed; });
}

void connection_table::end_setup() {
  if (timed_ && r_.established() > 0) r_.setup_us = fabric::us_between(setup_start_, last_established_);
}

}  // namespace ucmatose
