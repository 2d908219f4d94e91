// An ibacm provider that misbehaves when ib_acme --probe loads it:
// built as one whose name is not UTF-8, one whose provider_query throws,
// and one whose provider_query hangs. The probe's child must report it or die alone,
// never run on into the parent's code.
#include <infiniband/acm_prov.h>

#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace {
acm_provider provider{};
}

extern "C" int provider_query(acm_provider** p, std::uint32_t* version) {
#ifdef HOSTILE_THROWS
  throw std::runtime_error("a provider that throws");
#endif
#ifdef HOSTILE_HANGS
  ::sleep(600);
#endif
  provider.size = sizeof provider;
  provider.version = ACM_PROV_VERSION;
  provider.name = "bad\xff\xfe\x1b[2Jname";
  *p = &provider;
  if (version) *version = ACM_PROV_VERSION;
  return 0;
}
