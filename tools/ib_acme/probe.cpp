#include "ib_acme.hpp"

#include "fabric/acm/acm.hpp"
#include "fabric/verbs/ports.hpp"
#include "fabric/acm/sa.hpp"
#include "fabric/cli/console.hpp"
#include "fabric/cm/ud.hpp"
#include "fabric/base/wait.hpp"

#include <fmt/format.h>
#include <infiniband/acm_prov.h>
#include <infiniband/verbs.h>

#include <dirent.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

namespace ib_acme {

namespace {

using nlohmann::json;

// What ibacm_opts.cfg generates (ib_acme -O); the probe judges these values.
constexpr unsigned generated_min_mtu = 2048;
constexpr double generated_min_rate = 10;

double verbs_rate(std::uint8_t width, std::uint8_t speed) {
  double lanes = width == 1 ? 1 : width == 2 ? 4 : width == 4 ? 8 : width == 8 ? 12 : width == 16 ? 2 : 0;
  double per_lane = 0;
  switch (speed) {
    case 1: per_lane = 2.5; break;
    case 2: per_lane = 5; break;
    case 4:
    case 8: per_lane = 10; break;
    case 16: per_lane = 14; break;
    case 32: per_lane = 25; break;
    case 64: per_lane = 50; break;
    case 128: per_lane = 100; break;
    default: break;
  }
  return lanes * per_lane;
}

/// Every local port, from verbs (MTU, state) and umad (SM, pkeys) together.
std::vector<json> collect_ports(const options& opt, std::vector<fabric::sa::port_info>& umad_ports) {
  std::map<std::pair<std::string, int>, json> ports;
  int count = 0;
  std::unique_ptr<ibv_device*, decltype(&ibv_free_device_list)> list(ibv_get_device_list(&count), &ibv_free_device_list);
  for (int i = 0; list && i < count; ++i) {
    std::unique_ptr<ibv_context, decltype(&ibv_close_device)> ctx(ibv_open_device(list.get()[i]), &ibv_close_device);
    if (!ctx) continue;
    ibv_device_attr attr{};
    if (ibv_query_device(ctx.get(), &attr) != 0) continue;
    std::string dev = ibv_get_device_name(list.get()[i]);
    for (int p = 1; p <= attr.phys_port_cnt; ++p) {
      ibv_port_attr pa{};
      if (ibv_query_port(ctx.get(), static_cast<std::uint8_t>(p), &pa) != 0) continue;
      json j{{"device", dev},
             {"port", p},
             {"link_layer", pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand"},
             {"state", fabric::port_state_name(static_cast<std::uint8_t>(pa.state))},
             {"mtu", fabric::mtu_bytes(pa.active_mtu)},
             {"max_mtu", fabric::mtu_bytes(pa.max_mtu)},
             {"rate_gbps", verbs_rate(pa.active_width, pa.active_speed)},
             {"lid", pa.lid},
             {"sm_lid", pa.sm_lid}};
      json pkeys = json::array();
      for (int k = 0; k < attr.max_pkeys && k < 128; ++k) {
        __be16 pk = 0;
        if (ibv_query_pkey(ctx.get(), static_cast<std::uint8_t>(p), k, &pk) != 0) break;
        auto v = be16toh(pk);
        if (v & 0x7fff) pkeys.push_back(fmt::format("0x{:04x}", v));
      }
      j["pkeys"] = std::move(pkeys);
      ports[{dev, p}] = std::move(j);
    }
  }
  umad_ports = fabric::sa::list_ports();
  for (const auto& u : umad_ports) {
    auto& j = ports[{u.ca, u.port}];
    j["device"] = u.ca;
    j["port"] = u.port;
    if (!u.link_layer.empty()) j["link_layer"] = u.link_layer;
    j["state"] = fabric::sa::state_name(u.state);
    if (!j.contains("rate_gbps") || j["rate_gbps"] == 0) j["rate_gbps"] = u.rate;
    j["lid"] = u.base_lid;
    j["sm_lid"] = u.sm_lid;
    j["sm_sl"] = u.sm_sl;
    j["gid"] = fabric::acm::format_gid(u.gid());
    json pkeys = json::array();
    for (auto k : u.pkeys) pkeys.push_back(fmt::format("0x{:04x}", k));
    j["pkeys"] = std::move(pkeys);
    j["umad"] = true;
  }
  std::vector<json> out;
  for (auto& [key, j] : ports) {
    if (!j.contains("umad")) j["umad"] = false;
    // The SA answers when a query for the port's own loopback path comes
    // back; the record also tells the path MTU when verbs cannot.
    const fabric::sa::port_info* u = nullptr;
    for (const auto& x : umad_ports)
      if (x.ca == key.first && x.port == key.second) u = &x;
    json sa{{"answered", false}};
    if (j["link_layer"] != "InfiniBand") {
      sa["error"] = "not an InfiniBand port";
    } else if (!u) {
      sa["error"] = "no umad device for the port";
    } else if (u->state != 4) {
      sa["error"] = "port not active";
    } else {
      fabric::acm::path_record self;
      self.sgid = self.dgid = u->gid();
      auto ans = fabric::sa::query_path(*u, self, std::chrono::milliseconds(std::min(opt.timeout_ms, 2000)));
      sa["answered"] = ans.answered;
      if (ans.record) {
        sa["path_mtu"] = fabric::mtu_bytes(ans.record->mtu);
        sa["path_rate_gbps"] = fabric::rate_gbps(ans.record->rate);
        if (!j.contains("mtu")) j["mtu"] = fabric::mtu_bytes(ans.record->mtu);
      }
      if (!ans.error.empty()) sa["error"] = ans.error;
    }
    j["sa"] = std::move(sa);
    out.push_back(std::move(j));
  }
  return out;
}

bool exists(const std::string& path, mode_t type) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
}

json probe_service(const options& opt) {
  json s;
  std::string unix_path(fabric::acm::default_unix_path);
  bool unix_present = exists(unix_path, S_IFSOCK);
  bool port_file = exists(opt.port_file, S_IFREG);
  s["unix_socket"] = {{"path", unix_path}, {"present", unix_present}};
  s["port_file"] = {{"path", opt.port_file}, {"present", port_file}};
  if (port_file) s["port_file"]["port"] = fabric::acm::service_port(opt.port_file);
  auto until = fabric::deadline::after(std::chrono::milliseconds(std::min(opt.timeout_ms, 1000)));
  std::string via;
  std::string error;
  try {
    fabric::acm::client::connect(unix_path, 0, until, service_user_uid(opt));
    via = "unix";
  } catch (const fabric::error& e) {
    error = e.what();
  }
  if (via.empty()) {
    try {
      fabric::acm::client::connect("localhost", fabric::acm::service_port(opt.port_file), until, service_user_uid(opt));
      via = "tcp";
    } catch (const fabric::error& e) {
      error += std::string("; ") + e.what();
    }
  }
  s["running"] = !via.empty();
  if (!via.empty())
    s["via"] = via;
  else
    s["error"] = error;
  return s;
}

/// The child's half of probe_provider: loads the provider, writes what it
/// found as JSON to `fd`, and always ends with _exit, whatever is thrown:
/// the child must never run on into the parent's code.
[[noreturn]] void provider_child(const std::string& path, int fd) noexcept {
  try {
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
          c["version"] = version;
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

/// Loads one provider in a child process (a provider starts threads and
/// may crash or hang), asks provider_query, and reports.
json probe_provider(const std::string& path, int timeout_ms) {
  json r{{"file", path}, {"loaded", false}};
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
  std::string text;
  auto until = fabric::deadline::after(std::chrono::milliseconds(timeout_ms));
  char buf[4096];
  for (;;) {
    if (fabric::interrupted()) {
      // Ctrl-C ends the probe: the child goes first, then the run.
      ::kill(pid, SIGKILL);
      ::close(fds[0]);
      ::waitpid(pid, nullptr, 0);
      fabric::throw_if_interrupted();
    }
    pollfd p[2] = {{fds[0], POLLIN, 0}, {fabric::interrupt_fd(), POLLIN, 0}};
    int rc = ::poll(p, 2, until.poll_timeout());
    if (rc < 0 && errno == EINTR) continue;
    if (rc > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;  // the interrupt: seen above
    if (rc <= 0) {
      r["error"] = "provider did not answer in time";
      ::kill(pid, SIGKILL);
      break;
    }
    auto n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!text.empty()) {
    auto c = json::parse(text, nullptr, false);
    if (!c.is_discarded())
      for (auto& [k, v] : c.items()) r[k] = v;
  } else if (!r.contains("error")) {
    r["error"] = WIFSIGNALED(status) ? fmt::format("provider crashed (signal {})", WTERMSIG(status))
                                     : "provider gave no answer";
  }
  if (!r.contains("fits")) r["fits"] = false;
  return r;
}

json probe_providers(const options& opt) {
  json p{{"path", opt.provider_path}};
  json list = json::array();
  struct dir_closer {
    void operator()(DIR* d) const noexcept { ::closedir(d); }
  };
  std::unique_ptr<DIR, dir_closer> dir(::opendir(opt.provider_path.c_str()));
  if (!dir) {
    p["error"] = fmt::format("{}: {}", opt.provider_path, std::strerror(errno));
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
  for (const auto& f : files) list.push_back(probe_provider(f, std::min(opt.timeout_ms, 5000)));
  p["providers"] = std::move(list);
  return p;
}

json verdict(std::string option, std::string value, bool usable, std::string why) {
  return {{"option", std::move(option)}, {"value", std::move(value)}, {"usable", usable}, {"why", std::move(why)}};
}

json judge_options(const std::vector<json>& ports, const json& service, const json& providers) {
  json out = json::array();
  std::vector<const json*> ib_active;
  bool sm = false, sa = false;
  for (const auto& p : ports) {
    if (p.value("link_layer", "") == "InfiniBand" && p.value("state", "") == "Active") {
      ib_active.push_back(&p);
      if (p.value("sm_lid", 0) != 0) sm = true;
      if (p["sa"].value("answered", false)) sa = true;
    }
  }
  bool any_ib = !ib_active.empty();
  out.push_back(verdict("addr_prot", "acm", any_ib && sm,
                        !any_ib ? "needs IB multicast: no active InfiniBand port"
                        : !sm   ? "needs IB multicast: no subnet manager known to the ports"
                                : "active InfiniBand port with a subnet manager"));
  out.push_back(verdict("route_prot", "sa", sa, sa ? "the SA answers a PathRecord query" : "no SA answered a PathRecord query"));
  out.push_back(verdict("route_prot", "acm", any_ib && sm, any_ib && sm ? "IB multicast available" : "needs IB multicast"));
  out.push_back(verdict("loopback_prot", "local", true, "always available"));

  unsigned mtu_floor = 0;
  double rate_floor = 0;
  for (const auto* p : ib_active) {
    unsigned m = p->value("mtu", 0u);
    if (m && (mtu_floor == 0 || m < mtu_floor)) mtu_floor = m;
    double r = p->value("rate_gbps", 0.0);
    if (r > 0 && (rate_floor == 0 || r < rate_floor)) rate_floor = r;
  }
  out.push_back(verdict("min_mtu", std::to_string(generated_min_mtu), mtu_floor >= generated_min_mtu,
                        mtu_floor ? fmt::format("smallest active InfiniBand port MTU {}", mtu_floor)
                                  : "no active InfiniBand port MTU known"));
  if (mtu_floor) out.back()["suggested"] = std::to_string(mtu_floor);
  out.push_back(verdict("min_rate", fmt::format("{}", generated_min_rate), rate_floor >= generated_min_rate,
                        rate_floor > 0 ? fmt::format("slowest active InfiniBand port {} Gb/s", rate_floor)
                                       : "no active InfiniBand port rate known"));
  if (rate_floor > 0) out.back()["suggested"] = fmt::format("{}", rate_floor);

  bool running = service.value("running", false);
  bool unix_sock = service["unix_socket"].value("present", false);
  bool port_file = service["port_file"].value("present", false);
  std::string via = service.value("via", "");
  out.push_back(verdict("server_mode", "unix", !running || via == "unix",
                        running ? (via == "unix" ? "the service answers on its unix socket" : "the running service does not use its unix socket")
                                : (unix_sock ? "a stale unix socket is present" : "the service is not running; any mode can be set")));
  out.push_back(verdict("server_mode", "open", !running || via == "tcp" || port_file,
                        port_file ? "a TCP port file is present" : running ? "the running service announces no TCP port" : "the service is not running"));
  out.push_back(verdict("server_mode", "loop", !running || via == "tcp" || port_file,
                        port_file ? "a TCP port file is present" : running ? "the running service announces no TCP port" : "the service is not running"));

  bool have_prov = false;
  for (const auto& p : providers.value("providers", json::array()))
    if (p.value("fits", false)) have_prov = true;
  out.push_back(verdict("provider", "ibacmp", have_prov,
                        have_prov ? "a provider with a matching interface version is installed"
                                  : "no loadable provider with a matching interface version"));
  out.push_back(verdict("service", "running", running, running ? "an ibacm service answers" : "no ibacm service answers"));
  return out;
}

}  // namespace

json probe(const options& opt) {
  std::vector<fabric::sa::port_info> umad_ports;
  auto ports = collect_ports(opt, umad_ports);
  json p;
  p["ports"] = ports;
  p["service"] = probe_service(opt);
  p["providers"] = probe_providers(opt);
  p["options"] = judge_options(ports, p["service"], p["providers"]);
  return p;
}

std::string format_probe(const json& p) {
  std::string s = "ACM option probe\n";
  s += fmt::format("{:<12} {:>4} {:<10} {:<7} {:>5} {:>6} {:>5} {:>6} {:<8} {}\n", "device", "port", "link", "state", "mtu",
                   "rate", "lid", "sm_lid", "sa", "pkeys");
  for (const auto& port : p["ports"]) {
    std::string pkeys;
    for (const auto& k : port.value("pkeys", json::array())) pkeys += (pkeys.empty() ? "" : ",") + k.get<std::string>();
    const auto& sa = port["sa"];
    std::string sa_text = sa.value("answered", false) ? (sa.contains("error") ? "error" : "answers") : "no";
    s += fmt::format("{:<12} {:>4} {:<10} {:<7} {:>5} {:>6} {:>5} {:>6} {:<8} {}\n", port.value("device", ""),
                     port.value("port", 0), port.value("link_layer", "?"), port.value("state", "?"), port.value("mtu", 0u),
                     fmt::format("{}", port.value("rate_gbps", 0.0)), port.value("lid", 0u), port.value("sm_lid", 0u),
                     sa_text, pkeys.empty() ? "-" : pkeys);
  }
  if (p["ports"].empty()) s += "  (no RDMA port)\n";
  const auto& svc = p["service"];
  s += fmt::format("service: {}", svc.value("running", false) ? "running (" + svc.value("via", "") + ")" : "not running");
  // Paths, file names and the loader's messages are the user's or the
  // file system's bytes.
  auto text = [](const json& j, const char* key, const char* absent) { return fabric::printable(j.value(key, absent)); };
  s += fmt::format("; unix socket {} {}; port file {} {}\n", text(svc["unix_socket"], "path", ""),
                   svc["unix_socket"].value("present", false) ? "present" : "absent", text(svc["port_file"], "path", ""),
                   svc["port_file"].value("present", false) ? "present" : "absent");
  const auto& prov = p["providers"];
  s += fmt::format("providers in {}:", text(prov, "path", ""));
  if (prov.contains("error")) s += fmt::format(" {}", text(prov, "error", ""));
  s += "\n";
  for (const auto& x : prov.value("providers", json::array())) {
    if (x.value("fits", false) || x.contains("name"))
      s += fmt::format("  {} name {} version {} {}\n", text(x, "file", ""), text(x, "name", "?"), x.value("version", 0u),
                       x.value("fits", false) ? "fits" : "does not fit");
    else
      s += fmt::format("  {} cannot load: {}\n", text(x, "file", ""), text(x, "error", "?"));
  }
  s += "options:\n";
  for (const auto& o : p["options"])
    s += fmt::format("  {:<14} {:<8} {:<4} {}\n", o.value("option", ""), o.value("value", ""),
                     o.value("usable", false) ? "yes" : "no", o.value("why", ""));
  return s;
}

}  // namespace ib_acme
