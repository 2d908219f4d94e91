#include "fabric/cli/ud_report.hpp"

#include "fabric/cli/json_values.hpp"

#include <fmt/format.h>

namespace fabric {

bool ud_result::fail(const fabric::error& e) {
  if (state == "failed") return false;
  state = "failed";
  error = e.what();
  return true;
}

bool item_ok(const ud_result& r, std::string_view ready) {
  return r.state == ready && r.lost() == 0 && r.verify_errors == 0;
}

std::vector<std::string> loss_lines(std::string_view who, const ud_result& r) {
  std::vector<std::string> lines;
  if (r.lost() > 0)
    lines.push_back(fmt::format("{} {}: received {} of {} messages, {} lost", who, r.index, r.received, r.expected,
                                r.lost()));
  if (r.verify_errors > 0) lines.push_back(fmt::format("{} {}: {} messages failed verification", who, r.index, r.verify_errors));
  return lines;
}

std::string oversize_warning(std::string_view who, const ud_result& r, std::uint32_t size) {
  if (r.oversize == 0) return {};
  return fmt::format("{}: dropped {} datagrams larger than {} bytes (-S)", who, r.oversize, size);
}

verdict loss_verdict(const ud_totals& t) {
  if (t.lost > 0 && t.oversize > 0)
    return {exit_code::protocol,
            fmt::format("lost {} of {} messages: received {}; a datagram larger than our {}-byte messages arrived "
                        "({} dropped)", t.lost, t.expected, t.received, t.size, t.oversize)};
  if (t.lost > 0)
    return {exit_code::test_failed, fmt::format("lost {} of {} messages: received {}", t.lost, t.expected, t.received)};
  if (t.verify_errors > 0) return {exit_code::test_failed, fmt::format("{} messages failed verification", t.verify_errors)};
  return {};
}

namespace {

// Why an item is not ok, in the words of the loss lines.
nlohmann::json item_error(const ud_result& r, std::string_view ready) {
  if (!r.error.empty()) return r.error;
  if (r.state != ready) return fmt::format("{}: never {}", r.state, ready);
  if (r.lost() > 0) return fmt::format("received {} of {} messages, {} lost", r.received, r.expected, r.lost());
  if (r.verify_errors > 0) return fmt::format("{} messages failed verification", r.verify_errors);
  return nullptr;
}

}  // namespace

nlohmann::json result_json(std::string_view kind, std::string_view ready, std::string_view setup_key,
                           const ud_result& r) {
  nlohmann::json j{{"kind", kind},
                   {"index", r.index},
                   {"ok", item_ok(r, ready)},
                   {"error", item_error(r, ready)},
                   {"state", r.state},
                   {"qpn", value_or_null(r.qpn)},
                   {"remote_qpn", value_or_null(r.remote_qpn)},
                   {"qkey", value_or_null(r.qkey)},
                   {"sent", r.sent},
                   {"received", r.received},
                   {"expected", r.expected},
                   {"lost", r.lost()},
                   {"verify_errors", r.verify_errors},
                   {"oversize", r.oversize}};
  j[std::string(setup_key)] = fabric::value_or_null(r.setup_us);
  return j;
}

cli::fields summary_fields(const ud_summary_words& words, std::size_t items, const ud_totals& t,
                           std::optional<double> elapsed_us) {
  static constexpr cli::field failed{"failed", "{} failed"};
  static constexpr cli::field sent{"sent", "sent {}"};
  static constexpr cli::field received{"received", "received {}"};
  static constexpr cli::field expected{"expected", "of {}", " "};
  static constexpr cli::field lost{"lost", "lost {}"};
  static constexpr cli::field verify_errors{"verify_errors", "{} verify errors"};
  static constexpr cli::field elapsed{"elapsed_us", "data phase {:.3f} ms", ", ", 1e-3};
  static constexpr cli::field rate{"messages_per_second", "{:.0f} messages/s"};
  std::optional<double> per_second;
  if (elapsed_us && *elapsed_us > 0) per_second = static_cast<double>(t.sent + t.received) * 1e6 / *elapsed_us;
  cli::fields f;
  f.line(words.head)
      .put(words.items, items)
      .put(failed, t.failed, false)
      .put(sent, t.sent, words.say_sent)
      .put(received, t.received, words.say_received)
      .put(expected, t.expected, words.say_received)
      .put(lost, t.lost, words.say_received)
      .put(verify_errors, t.verify_errors, false);
  // Only a data phase that took time has a rate to say.
  f.line(words.head).put(elapsed, elapsed_us, words.say_rates && per_second).put(rate, per_second, words.say_rates);
  f.line(words.head).put(words.setup, t.setup, t.setup.count() > 0);
  return f;
}

verdict run_ud_test(console& con, const std::function<void()>& body, const ud_test_end& end) {
  auto close = [&](const verdict& v) {
    for (const auto& line : end.loss_lines()) con.line(line);
    if (v.ok() || v.code == exit_code::test_failed)
      if (end.stats_lines)
        for (const auto& line : end.stats_lines()) con.line(line);
    end.emit_results();
    con.test_end(v.code);
  };
  try {
    body();
  } catch (const fabric::error& e) {
    close({e.code(), e.what()});
    throw;
  }
  auto v = end.judge();
  close(v);
  return v;
}

}  // namespace fabric
