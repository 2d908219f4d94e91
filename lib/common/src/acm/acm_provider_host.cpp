// The helpers an ibacm provider library expects its host (the ibacm daemon)
// to export (acm_prov.h, ibacm_prov(7)). Defined here, in a shared library
// every tool loads, so that `ib_acme --probe` can load a provider and ask
// it what it is. They satisfy the loader and the provider's start-up; none
// of them serves real requests. Signatures follow acm_prov.h, with opaque
// pointers where the header's types would pull in its dependencies.

#include <infiniband/verbs.h>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" {

__attribute__((visibility("default"))) void acm_write(int, const char*, ...) {}

__attribute__((visibility("default"))) void acm_format_name(int, char* name, std::size_t name_size, std::uint8_t,
                                                            const std::uint8_t*, std::size_t) {
  if (name && name_size) name[0] = '\0';
}

__attribute__((visibility("default"))) int ib_any_gid(ibv_gid* gid) {
  static constexpr std::uint8_t zero[16] = {};
  return gid && std::memcmp(gid->raw, zero, sizeof zero) == 0;
}

__attribute__((visibility("default"))) std::uint8_t acm_gid_index(void*, ibv_gid*) { return 0; }

__attribute__((visibility("default"))) int acm_get_gid(void*, int, ibv_gid*) { return -1; }

__attribute__((visibility("default"))) std::uint64_t acm_path_comp_mask(void*) { return 0; }

__attribute__((visibility("default"))) int acm_resolve_response(std::uint64_t, void*) { return -1; }

__attribute__((visibility("default"))) int acm_query_response(std::uint64_t, void*) { return -1; }

__attribute__((visibility("default"))) int acm_get_rate(std::uint8_t, std::uint8_t) { return IBV_RATE_MAX; }

// A provider reads min_mtu / min_rate from the options file through these
// at load time; the conversions follow ibacm's.
__attribute__((visibility("default"))) int acm_convert_mtu(int mtu) {
  switch (mtu) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 1024: return IBV_MTU_1024;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return IBV_MTU_2048;
  }
}

__attribute__((visibility("default"))) int acm_convert_rate(int rate) {
  switch (rate) {
    case 2: return IBV_RATE_2_5_GBPS;
    case 5: return IBV_RATE_5_GBPS;
    case 10: return IBV_RATE_10_GBPS;
    case 20: return IBV_RATE_20_GBPS;
    case 30: return IBV_RATE_30_GBPS;
    case 40: return IBV_RATE_40_GBPS;
    case 60: return IBV_RATE_60_GBPS;
    case 80: return IBV_RATE_80_GBPS;
    case 120: return IBV_RATE_120_GBPS;
    default: return IBV_RATE_10_GBPS;
  }
}

__attribute__((visibility("default"))) void* acm_alloc_sa_mad(const void*, void*, void (*)(void*)) { return nullptr; }

__attribute__((visibility("default"))) void acm_free_sa_mad(void*) {}

__attribute__((visibility("default"))) int acm_send_sa_mad(void*) { return -1; }

__attribute__((visibility("default"))) const char* acm_get_opts_file() { return "/etc/rdma/ibacm_opts.cfg"; }

__attribute__((visibility("default"))) void acm_increment_counter(int) {}

__attribute__((visibility("default"))) int acm_if_get_sgid(char*, ibv_gid*) { return -1; }

}  // extern "C"
