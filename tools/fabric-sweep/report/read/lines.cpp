// The report's input as lines: a bounded buffer, labels taken off, srun's
// pieces of a long line joined again. Whether a text is whole is told by
// a scan of its brackets outside strings, carried on from piece to piece,
// so that joining costs each byte once.
#include "fabric-sweep/report/read/read.hpp"

#include "fabric/base/wait.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <unordered_map>

namespace sweep {

namespace {

/// The bytes a scan stops at: outside strings a quote or a bracket, inside
/// them a quote or a backslash. Every other byte is skipped by one table
/// look-up, so that a report of a thousand hosts' gigabytes is read at the
/// speed of its JSON parser, not of this check before it.
struct stops {
  std::array<bool, 256> outside{}, inside{};
  constexpr stops() {
    for (unsigned char c : std::string_view("\"{}[]")) outside[c] = true;
    inside[static_cast<unsigned char>('"')] = inside[static_cast<unsigned char>('\\')] = true;
  }
};
constexpr stops stop_at;

/// Where a scan of JSON text stands: inside how many brackets, in a string.
struct scan {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  bool closed = false;  ///< the first value ended
  bool broken = false;  ///< a closing bracket too many, or text after the end

  void over(std::string_view text) {
    const char* p = text.data();
    const char* const end = p + text.size();
    auto skip = [&](const std::array<bool, 256>& table) {
      while (p != end && !table[static_cast<unsigned char>(*p)]) ++p;
    };
    while (p != end && !broken) {
      if (closed) {
        if (*p != ' ' && *p != '\t' && *p != '\r') broken = true;
        ++p;
      } else if (escaped) {
        escaped = false;
        ++p;
      } else if (in_string) {
        skip(stop_at.inside);
        if (p == end) return;
        if (*p++ == '\\') escaped = true;
        else in_string = false;
      } else {
        skip(stop_at.outside);
        if (p == end) return;
        char c = *p++;
        if (c == '"') in_string = true;
        else if (c == '{' || c == '[') ++depth;
        else if (depth == 0) broken = true;
        else if (--depth == 0) closed = true;
      }
    }
  }
  [[nodiscard]] bool whole() const { return closed && !broken; }
};

/// The label of a piece that continues a line: what a launcher puts in
/// front ("0: ", "node01: "), up to its first ": " when no JSON comes first.
std::string_view label_of(std::string_view raw) {
  auto colon = raw.find(": ");
  if (colon == std::string_view::npos) return {};
  auto label = raw.substr(0, colon + 2);
  return label.find_first_of("{\"") == std::string_view::npos ? label : std::string_view{};
}

struct text_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

}  // namespace

struct line_joiner::state {
  sink to;
  std::size_t max_line;
  line_counts counts;
  std::string line;            // the physical line being gathered
  bool skipping = false;       // the rest of an over-long line
  struct waiting {
    std::string text;          // from the first '{'
    scan at;
  };
  std::unordered_map<std::string, waiting, text_hash, std::equal_to<>> pending;  // label -> line so far

  void take(std::string_view raw);
  void hand_on(std::string_view label, std::string_view text) { to(label, text); }
};

line_joiner::line_joiner(sink to, std::size_t max_line) : s_(std::make_unique<state>()) {
  s_->to = std::move(to);
  s_->max_line = max_line;
}

line_joiner::~line_joiner() = default;

const line_counts& line_joiner::counts() const noexcept { return s_->counts; }

void line_joiner::feed(std::string_view bytes) {
  auto& s = *s_;
  while (!bytes.empty()) {
    auto nl = bytes.find('\n');
    auto part = bytes.substr(0, nl);
    if (s.skipping) {
      if (nl != std::string_view::npos) s.skipping = false;
    } else if (s.line.size() + part.size() > s.max_line) {
      ++s.counts.over_long;
      s.line.clear();
      s.skipping = nl == std::string_view::npos;
    } else if (nl == std::string_view::npos) {
      s.line.append(part);
    } else if (s.line.empty()) {
      s.take(part);  // the whole line in this buffer: no copy
    } else {
      s.line.append(part);
      s.take(s.line);
      s.line.clear();
    }
    if (nl == std::string_view::npos) return;
    bytes.remove_prefix(nl + 1);
  }
}

void line_joiner::end_of_input() {
  auto& s = *s_;
  if (!s.line.empty()) s.take(s.line);
  s.line.clear();
  s.skipping = false;
}

void line_joiner::finish() {
  end_of_input();
  s_->counts.foreign += s_->pending.size();
  s_->pending.clear();
}

void line_joiner::state::take(std::string_view raw) {
  if (raw.find_first_not_of(" \t\r") == std::string_view::npos) return;
  if (!pending.empty()) {
    // A piece of the line waiting under this label (or under none).
    auto label = label_of(raw);
    auto it = pending.find(label);
    if (it == pending.end() && !label.empty()) {
      it = pending.find(std::string_view{});
      label = {};
    }
    if (it != pending.end()) {
      auto rest = raw.substr(label.size());
      auto& w = it->second;
      scan alone;
      alone.over(rest.substr(std::min(rest.find('{'), rest.size())));
      scan joined = w.at;
      joined.over(rest);
      if (joined.whole() || !alone.whole()) {
        if (w.text.size() + rest.size() > max_line) {
          ++counts.over_long;
          pending.erase(it);
          return;
        }
        w.text.append(rest);
        w.at = joined;
        if (joined.broken) {
          ++counts.foreign;
          pending.erase(it);
        } else if (joined.whole()) {
          std::string text = std::move(w.text);
          std::string key = it->first;
          pending.erase(it);
          hand_on(key, text);
        }
        return;
      }
      ++counts.foreign;  // what waited never ended; this line stands alone
      pending.erase(it);
    }
  }
  auto brace = raw.find('{');
  if (brace == std::string_view::npos) {
    ++counts.foreign;
    return;
  }
  auto label = raw.substr(0, brace), text = raw.substr(brace);
  scan at;
  at.over(text);
  if (at.whole()) return hand_on(label, text);
  if (at.broken) {
    ++counts.foreign;
    return;
  }
  auto& w = pending[std::string(label)];
  if (!w.text.empty()) ++counts.foreign;  // one waiting line a label
  w.text.assign(text);
  w.at = at;
}

void read_fd(int fd, line_joiner& to) {
  std::string buf(std::size_t{1} << 20, '\0');
  for (;;) {
    // A pipe may stay quiet: wait where Ctrl-C is heard.
    fabric::wait_readable(fd, fabric::deadline::never());
    auto got = ::read(fd, buf.data(), buf.size());
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) throw fabric::error(fabric::exit_code::system, fmt::format("read: {}", std::strerror(errno)));
    if (got == 0) break;
    to.feed(std::string_view(buf.data(), static_cast<std::size_t>(got)));
    fabric::throw_if_interrupted();
  }
  to.end_of_input();
}

}  // namespace sweep
