// One run of ib_acme: the services, the generated files and the probe, in
// the original's order, and the exit code that sums them up.
#include "services.hpp"

#include <fmt/format.h>

#include <unistd.h>

namespace ib_acme {

using fabric::error;
using fabric::exit_code;

namespace {

/// -A / -O; prints the original's lines; returns the original's status.
int generate(const options& opt, report& r, const printer& out, hard_failure& hard) {
  auto attempt = [&](const char* kind, const std::string& name, auto&& make_text, const char* failure) {
    if (opt.verbose) out("Generating {}/{}\n", fabric::printable(opt.dir), fabric::printable(name));
    try {
      auto path = write_config(opt.dir, name, make_text());
      r.files.push_back({kind, path});
      out.result(result_json(r.files.back(), r.files.size() - 1));
      return 0;
    } catch (const error& e) {
      if (e.code() == exit_code::no_device) {
        out("ibv_get_device_list - no devices present?\n");
      } else {
        out("{}: {}\n", failure, e.what());
      }
      hard.note(e);
      return -1;
    }
  };
  int ret = 0;
  if (opt.make_addr)
    ret = attempt("addr", opt.addr_file, [&] {
      char host[256] = {};
      if (gethostname(host, sizeof host - 1) != 0) fabric::throw_errno(errno, "gethostname");
      auto text = addr_file_text(host, list_local_ports());
      if (opt.verbose) {
        // The original echoes the generated entries.
        auto body = text.substr(text.rfind("# node31-2"));
        out("{}", body.substr(body.find('\n') + 1));
      }
      return text;
    }, "Failed to open address configuration file");
  if (ret == 0 && opt.make_opts)
    ret = attempt("opts", opt.opts_file, [] { return opts_file_text(); }, "Failed to open option configuration file");
  return ret;
}

}  // namespace

fabric::verdict run(const options& opt, report& r, fabric::console& con) {
  con.set_role("client");
  printer out(con);
  session_outcome services;
  hard_failure gen_failure;
  int ret = 0;
  if (!opt.dest.empty() || opt.perf != perf_mode::none || opt.endpoints) {
    r.return_status = -1;
    services = query_services(opt, r, out);
    ret = r.return_status;
  }
  if (ret == 0 && (opt.make_addr || opt.make_opts)) {
    ret = generate(opt, r, out, gen_failure);
    r.return_status = ret;
  }
  if (opt.probe) {
    r.probe = probe(opt);
    out.raw(format_probe(*r.probe));
    const auto& checks = (*r.probe)["options"];
    for (std::size_t i = 0; i < checks.size(); ++i) out.result(check_json(checks[i], i));
  }
  bool probe_only = opt.probe && opt.dest.empty() && opt.perf == perf_mode::none && !opt.endpoints &&
                    !opt.make_addr && !opt.make_opts;
  if (!probe_only && (opt.verbose || !(opt.make_addr || opt.make_opts) || ret != 0))
    out("return status 0x{:x}\n", static_cast<std::uint32_t>(ret));

  // The original's lines ("ib_acm_resolve_ip failed: ...", "return status
  // 0x...") say what failed; its stderr stays empty, and so does ours but
  // with -V. The reason is in the JSON either way.
  auto told = [&](fabric::verdict v) {
    v.told = !opt.verbose;
    return v;
  };
  const auto& hard = services.hard.code != exit_code::ok ? services.hard : gen_failure;
  if (hard.code != exit_code::ok) return {hard.code, hard.message};
  std::size_t failed = 0;
  for (const auto& l : r.results) failed += l.ok ? 0 : 1;
  if (failed > 0) return told({exit_code::test_failed, fmt::format("{} of {} lookups failed", failed, r.results.size())});
  if (ret != 0) return told({exit_code::test_failed, fmt::format("return status {}", ret)});
  if (services.query_failed) return told({exit_code::test_failed, "a counter or endpoint query failed"});
  return {};
}

}  // namespace ib_acme
