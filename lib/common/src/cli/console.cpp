#include "fabric/cli/console.hpp"

#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

namespace fabric {

std::string schema_name(std::string_view tool) {
  // A tool's version moves when a key of its documents changes its meaning
  // or type, or goes (schemas/CHANGES.md): fabric-sweep's report's
  // summary.ok, a count, became summary.passed in version 2.
  int version = tool == "fabric-sweep" ? 2 : 1;
  return fmt::format("fabric-toolkit/{}/{}", tool, version);
}

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

namespace {

double unix_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

console::console(std::string_view tool, output_mode mode)
    : tool_(tool), mode_(mode), host_(host_name()), schema_(schema_name(tool)) {}

void console::set_role(std::string_view role) {
  std::lock_guard lock(mutex_);
  role_ = role;
}

void console::set_schema(std::string_view schema) {
  std::lock_guard lock(mutex_);
  schema_ = schema;
}

void console::write(std::FILE* f, std::string_view text) {
  if (closed_ && f == stdout) return;
  // A signal (Ctrl-C while a reader is slow) interrupts a blocked write
  // with nothing lost: write the rest, so that what is printed stays whole.
  for (std::size_t done = 0; done < text.size();) {
    done += std::fwrite(text.data() + done, 1, text.size() - done, f);
    if (done < text.size() && errno != EINTR) break;
    std::clearerr(f);
  }
  int flushed = 0;
  while ((flushed = std::fflush(f)) != 0 && errno == EINTR) std::clearerr(f);
  if (flushed == 0 || f != stdout) return;
  // The reader of stdout went away: nothing more can be said there, and a
  // run that only reports should not go on alone.
  closed_ = true;
  if (errno == EPIPE) {
    reader_gone_ = true;
    stop(exit_code::output_closed, "stdout closed: its reader went away");
    throw error(exit_code::output_closed, "stdout closed: its reader went away");
  }
  throw_errno(errno, "write to stdout");
}

void console::line(std::string_view text) {
  if (mode_ != output_mode::human) return;
  std::lock_guard lock(mutex_);
  write(stdout, fmt::format("{}\n", text));
}

void console::note(std::string_view text) {
  if (mode_ != output_mode::human) return;
  std::lock_guard lock(mutex_);
  write(stderr, fmt::format("{}\n", text));
}

void console::warning(std::string_view text) {
  std::lock_guard lock(mutex_);
  write(stderr, fmt::format("{}: warning: {}\n", tool_, printable(text)));
}

void console::diagnostic(std::string_view text) {
  std::lock_guard lock(mutex_);
  write(stderr, fmt::format("{}\n", text));
}

void console::write_event(std::string_view kind, const nlohmann::json& payload) {
  std::lock_guard lock(mutex_);
  nlohmann::json j{{"schema", schema_}, {"tool", tool_}, {"host", host_}, {"role", role_},
                   {"time", unix_time()},          {"event", kind}};
  j[std::string(kind)] = payload;
  write(stdout, dump_json(j) + '\n');
}

void console::test_end(exit_code code) {
  line(fmt::format("test complete\nreturn status {}", static_cast<int>(code)));
}

std::optional<exit_code> console::finish(nlohmann::json document, std::string_view error,
                                        const result_source& results) {
  std::lock_guard lock(mutex_);
  std::optional<exit_code> cut_short;
  std::string why;
  try {
    if (mode_ == output_mode::human) {
      // A reader that went away (| head) needs no word; any other failure does.
      if (!error.empty() && !reader_gone_) write(stderr, fmt::format("{}: error: {}\n", tool_, error));
      if (!closed_) std::fflush(stdout);
      return std::nullopt;
    }
    int indent = mode_ == output_mode::document ? 2 : -1;
    if (!results) {
      write(stdout, dump_json(document, indent) + '\n');
      return std::nullopt;
    }
    // The results are written as they come, and the verdict after them, so
    // that Ctrl-C while a million results are written still ends the
    // document whole and true: the results cut short, the verdict saying so.
    auto pair_text = [&](const std::string& key, const nlohmann::json& value) {
      auto v = dump_json(value, indent);
      if (indent >= 0)
        for (auto nl = v.find('\n'); nl != std::string::npos; nl = v.find('\n', nl + 3)) v.replace(nl, 1, "\n  ");
      return fmt::format("{}{}:{}{}", indent < 0 ? "" : "\n  ", dump_json(key), indent < 0 ? "" : " ", v);
    };
    static constexpr std::array<std::string_view, 4> verdict_keys{"summary", "ok", "exit_code", "error"};
    std::string head = "{";
    bool first_key = true;
    for (const auto& [key, value] : document.items()) {
      if (key == "results" || std::find(verdict_keys.begin(), verdict_keys.end(), key) != verdict_keys.end()) continue;
      head += (first_key ? "" : ",") + pair_text(key, value);
      first_key = false;
    }
    write(stdout, head + (first_key ? "" : ",") + (indent < 0 ? "\"results\":[" : "\n  \"results\": ["));
    // Items sit two levels deep in an indented document.
    std::string inner = indent < 0 ? "" : "\n    ", close = indent < 0 ? "]" : "\n  ]";
    bool first = true;
    try {
      results([&](const nlohmann::json& item) {
        if (interrupted()) throw fabric::error(exit_code::interrupted, "interrupted while the results were written");
        auto one = dump_json(item, indent);
        if (indent >= 0)
          for (auto nl = one.find('\n'); nl != std::string::npos; nl = one.find('\n', nl + 5)) one.replace(nl, 1, "\n    ");
        write(stdout, fmt::format("{}{}{}", first ? "" : ",", inner, one));
        first = false;
      });
    } catch (const fabric::error& e) {
      if (e.code() != exit_code::interrupted) throw;  // stdout is gone
      cut_short = exit_code::interrupted;
      why = "interrupted while the results were written";
    } catch (const std::exception& e) {
      // The results end where their source failed; the document stays
      // whole, and its verdict says that its results are not all there.
      cut_short = exit_code::system;
      why = fmt::format("the results could not all be written: {}", printable(e.what()));
    }
    if (cut_short) {
      document["ok"] = false;
      document["exit_code"] = static_cast<int>(*cut_short);
      if (document["error"].is_null()) document["error"] = why;
    }
    std::string tail = first ? "]" : close;
    for (auto key : verdict_keys)
      if (document.contains(key)) tail += "," + pair_text(std::string(key), document[std::string(key)]);
    write(stdout, tail + (indent < 0 ? "}\n" : "\n}\n"));
  } catch (const fabric::error& e) {
    // stdout failed under the document: the exit code says so, and stderr
    // why, unless its reader just went away.
    if (!reader_gone_) write(stderr, fmt::format("{}: error: {}\n", tool_, e.what()));
    return e.code();
  }
  return cut_short;
}

}  // namespace fabric
