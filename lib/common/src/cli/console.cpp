#include "fabric/cli/console.hpp"

#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

namespace fabric {

std::string schema_name(std::string_view tool) { return fmt::format("fabric-toolkit/{}/1", tool); }

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

console::console(std::string_view tool, output_mode mode) : tool_(tool), mode_(mode), host_(host_name()) {}

void console::set_role(std::string_view role) {
  std::lock_guard lock(mutex_);
  role_ = role;
}

void console::write(std::FILE* f, std::string_view text) {
  if (closed_) return;
  std::fwrite(text.data(), 1, text.size(), f);
  if (std::fflush(f) == 0 || f != stdout) return;
  // The reader of stdout went away: nothing more can be said there, and a
  // run that only reports should not go on alone.
  closed_ = true;
  if (errno == EPIPE) {
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

void console::event(std::string_view kind, const nlohmann::json& payload) {
  if (mode_ != output_mode::lines) return;
  std::lock_guard lock(mutex_);
  nlohmann::json j{{"schema", schema_name(tool_)}, {"tool", tool_}, {"host", host_}, {"role", role_},
                   {"time", unix_time()},          {"event", kind}};
  j[std::string(kind)] = payload;
  write(stdout, dump_json(j) + '\n');
}

void console::test_end(exit_code code) {
  line(fmt::format("test complete\nreturn status {}", static_cast<int>(code)));
}

void console::finish(nlohmann::json document, std::string_view error, const result_source& results) {
  std::lock_guard lock(mutex_);
  try {
    if (mode_ == output_mode::human) {
      if (!error.empty()) write(stderr, fmt::format("{}: error: {}\n", tool_, error));
      if (!closed_) std::fflush(stdout);
      return;
    }
    int indent = mode_ == output_mode::document ? 2 : -1;
    if (!results) {
      write(stdout, dump_json(document, indent) + '\n');
      return;
    }
    // The document around a mark where the results go; they are written in
    // its place as they come. The run is over: an interrupt now would only
    // leave half a document, so the writing goes on to the end.
    constexpr std::string_view mark = "\x01results\x01", dumped_mark = "\"\\u0001results\\u0001\"";
    document["results"] = mark;
    auto text = dump_json(document, indent);
    auto at = text.find(dumped_mark);
    write(stdout, std::string_view(text).substr(0, at));
    // Items sit two levels deep in an indented document.
    std::string inner = indent < 0 ? "" : "\n    ", close = indent < 0 ? "]" : "\n  ]";
    bool first = true;
    write(stdout, "[");
    try {
      results([&](const nlohmann::json& item) {
        auto one = dump_json(item, indent);
        if (indent >= 0)
          for (auto nl = one.find('\n'); nl != std::string::npos; nl = one.find('\n', nl + 5)) one.replace(nl, 1, "\n    ");
        write(stdout, fmt::format("{}{}{}", first ? "" : ",", inner, one));
        first = false;
      });
    } catch (const fabric::error&) {
      throw;  // stdout is gone
    } catch (const std::exception&) {
      // The results end where their source failed; the document stays whole.
    }
    write(stdout, first ? "]" : close);
    write(stdout, text.substr(at + dumped_mark.size()) + "\n");
  } catch (const fabric::error&) {
    // stdout is gone; the exit code says so.
  }
}

}  // namespace fabric
