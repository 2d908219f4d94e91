// An ibacm provider that misbehaves when ib_acme --probe loads it:
// built as one whose name is not UTF-8, one whose provider_query throws,
// one whose provider_query hangs, one that writes its own answer, in the
// probe's words but with wrong types, stray keys and raw escapes, to every
// pipe it finds and exits, and one that floods them. The probe's child
// must report it or die alone, never run on into the parent's code, and
// the parent must believe nothing of what it reads but facts of their type.
#include <infiniband/acm_prov.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace {
acm_provider provider{};

/// Writes `text` to every pipe this process holds, `times` times.
[[maybe_unused]] void write_to_pipes(std::string_view text, long times) {
  for (int fd = 3; fd < 1024; ++fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) continue;
    for (long i = 0; i < times; ++i)
      if (::write(fd, text.data(), text.size()) < 0) break;
  }
}
}  // namespace

extern "C" int provider_query(acm_provider** p, std::uint32_t* version) {
#ifdef HOSTILE_THROWS
  throw std::runtime_error("a provider that throws");
#endif
#ifdef HOSTILE_HANGS
  ::sleep(600);
#endif
#ifdef HOSTILE_LIES
  write_to_pipes(R"({"loaded":"yes","interface_version":-1,"size":1e300,"fits":1,"name":"a\u001b[2Jb","file":"/etc/passwd",)"
                 R"("stray":{"key":[1,2]},"error":"lies\u0007"})",
                 1);
  ::_exit(0);
#endif
#ifdef HOSTILE_FLOODS
  static const std::vector<char> block(1 << 16, '[');
  write_to_pipes({block.data(), block.size()}, 1 << 14);
  ::_exit(0);
#endif
  provider.size = sizeof provider;
  provider.version = ACM_PROV_VERSION;
  provider.name = "bad\xff\xfe\x1b[2Jname";
  *p = &provider;
  if (version) *version = ACM_PROV_VERSION;
  return 0;
}
