// The probe's look at the installed ibacm providers: each loaded in a child
// process (a provider starts threads and may crash or hang), asked what it
// is, and the child's answer read back within --timeout.
#include "probe.hpp"

#include "fabric/base/socket.hpp"
#include "fabric/base/text.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>
#include <infiniband/acm_prov.h>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace ib_acme {

using nlohmann::json;

namespace {

/// Leaves the child only its answer's pipe (moved to descriptor 3) and
/// /dev/null as stdin, stdout and stderr: whatever the provider's code
/// writes cannot reach the parent's output, its self-pipe or its sockets.
void isolate(int& fd) {
  int answer = ::fcntl(fd, F_DUPFD, 3);  // out of 0-2 first, whatever the parent's stdio was
  int null = ::open("/dev/null", O_RDWR);
  for (int std_fd : {0, 1, 2})
    if (null >= 0) ::dup2(null, std_fd);
  if (answer >= 0 && (answer == 3 || ::dup2(answer, 3) == 3)) fd = 3;
  ::close_range(fd + 1, ~0U, 0);
}

/// The child's half of probe_provider: loads the provider, writes what it
/// found as JSON to `fd`, and always ends with _exit, whatever is thrown:
/// the child must never run on into the parent's code.
[[noreturn]] void provider_child(const std::string& path, int fd) noexcept {
  try {
    isolate(fd);
    json c;
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      c["error"] = ::dlerror();
      // ibacm itself loads with RTLD_LAZY: see whether that would work.
      h = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
      c["lazy_loadable"] = h != nullptr;
    }
    if (h) {
      c["loaded"] = true;
      using query_fn = int (*)(acm_provider**, std::uint32_t*);
      auto q = reinterpret_cast<query_fn>(::dlsym(h, "provider_query"));
      if (!q) {
        c["error"] = "no provider_query symbol";
      } else {
        acm_provider* p = nullptr;
        std::uint32_t version = 0;
        int rc = q(&p, &version);
        if (rc != 0 || !p) {
          c["error"] = fmt::format("provider_query failed ({})", rc);
        } else {
          c["name"] = fabric::printable(p->name ? p->name : "");
          c["interface_version"] = version;
          c["size"] = p->size;
          c["fits"] = version == ACM_PROV_VERSION && p->size == sizeof(acm_provider);
        }
      }
    }
    auto text = c.dump(-1, ' ', false, json::error_handler_t::replace);
    [[maybe_unused]] auto n = ::write(fd, text.data(), text.size());
    ::_exit(0);
  } catch (...) {
    constexpr std::string_view text = R"({"loaded":true,"error":"the provider threw an exception"})";
    [[maybe_unused]] auto n = ::write(fd, text.data(), text.size());
    ::_exit(1);
  }
}

/// The longest answer a child writes is a few hundred bytes; more is the
/// provider's own writing, not read further.
constexpr std::size_t answer_limit = 64 * 1024;

/// Takes from the child's answer the facts it may tell, each only with its
/// type, and its text made printable again: the provider's own code ran in
/// the child and could have written anything to the pipe.
void take_answer(json& r, const json& c) {
  if (!c.is_object()) {
    r["error"] = "provider gave an unreadable answer";
    return;
  }
  auto take = [&](const char* key, bool (json::*has_type)() const noexcept) {
    auto it = c.find(key);
    if (it == c.end() || !((*it).*has_type)()) return;
    r[key] = it->is_string() ? json(fabric::printable(it->get_ref<const std::string&>())) : *it;
  };
  take("loaded", &json::is_boolean);
  take("lazy_loadable", &json::is_boolean);
  take("name", &json::is_string);
  take("interface_version", &json::is_number_unsigned);
  take("size", &json::is_number_unsigned);
  take("fits", &json::is_boolean);
  take("error", &json::is_string);
}

/// Loads one provider in a child process (a provider starts threads and
/// may crash or hang), asks provider_query, and reports.
json probe_provider(const std::string& path, const fabric::wait_limit& limit) {
  // Every fact has its key; what the provider did not tell is null.
  json r{{"file", path},    {"loaded", false}, {"lazy_loadable", nullptr}, {"name", nullptr},
         {"interface_version", nullptr}, {"size", nullptr},  {"fits", false},           {"error", nullptr}};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    r["error"] = fmt::format("pipe: {}", std::strerror(errno));
    return r;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) {
    r["error"] = fmt::format("fork: {}", std::strerror(errno));
    ::close(fds[0]);
    ::close(fds[1]);
    return r;
  }
  if (pid == 0) provider_child(path, fds[1]);
  ::close(fds[1]);
  fabric::unique_fd answer(fds[0]);
  std::string text;
  auto until = limit.next();
  char buf[4096];
  try {
    for (;;) {
      if (!fabric::wait_readable(answer.get(), until)) {
        r["error"] = "provider did not answer in time";
        ::kill(pid, SIGKILL);
        break;
      }
      auto n = ::read(answer.get(), buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > answer_limit) {
        ::kill(pid, SIGKILL);
        break;
      }
    }
  } catch (...) {
    // Ctrl-C ends the probe: the child goes first, then the run.
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    throw;
  }
  answer.reset();
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (text.size() > answer_limit) {
    r["error"] = "provider's answer too long";
  } else if (!text.empty()) {
    take_answer(r, json::parse(text, nullptr, false));
  } else if (r["error"].is_null()) {
    r["error"] = WIFSIGNALED(status) ? fmt::format("provider crashed (signal {})", WTERMSIG(status))
                                     : "provider gave no answer";
  }
  return r;
}

}  // namespace

json probe_providers(const options& opt) {
  json p{{"provider_path", opt.provider_path}, {"provider_error", nullptr}};
  json list = json::array();
  struct dir_closer {
    void operator()(DIR* d) const noexcept { ::closedir(d); }
  };
  std::unique_ptr<DIR, dir_closer> dir(::opendir(opt.provider_path.c_str()));
  if (!dir) {
    p["provider_error"] = fmt::format("{}: {}", opt.provider_path, std::strerror(errno));
    p["providers"] = std::move(list);
    return p;
  }
  std::vector<std::string> files;
  while (auto* d = ::readdir(dir.get())) {
    std::string name = d->d_name;
    // ibacm loads regular files ending in ".so" only.
    if (name.size() < 3 || name.compare(name.size() - 3, 3, ".so") != 0) continue;
    std::string full = opt.provider_path + "/" + name;
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    files.push_back(full);
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) list.push_back(probe_provider(f, opt.timeout));
  p["providers"] = std::move(list);
  return p;
}

}  // namespace ib_acme
