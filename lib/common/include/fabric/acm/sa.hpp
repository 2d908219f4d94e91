#pragma once
/// InfiniBand management through libibumad: the local ports as umad sees
/// them, and PathRecord queries straight to the Subnet Administrator.

#include "fabric/acm/path_record.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabric::sa {

/// One port of a local channel adapter (umad_get_ca).
struct port_info {
  std::string ca;
  int port = 0;
  std::string link_layer;      ///< "InfiniBand", "Ethernet"
  unsigned state = 0;          ///< 1 down, 2 init, 3 armed, 4 active
  unsigned phys_state = 0;     ///< 5 LinkUp
  unsigned rate = 0;           ///< Gb/s
  unsigned base_lid = 0;
  unsigned lmc = 0;
  unsigned sm_lid = 0;
  unsigned sm_sl = 0;
  std::uint32_t capmask = 0;
  std::uint64_t gid_prefix = 0;  ///< host order
  std::uint64_t port_guid = 0;   ///< host order
  std::vector<std::uint16_t> pkeys;   ///< non-zero entries of the table
  [[nodiscard]] std::array<std::uint8_t, 16> gid() const;
  [[nodiscard]] bool infiniband() const { return link_layer == "InfiniBand"; }
};

/// "Down", "Init", "Armed", "Active", ...
std::string state_name(unsigned state);

/// A MAD status field in words: the common bits (busy, redirect, the
/// invalid-field code) and the SA's own code (no records, ...); "success"
/// only when the whole field is 0.
std::string describe_mad_status(std::uint16_t status);

/// Every port of every umad device; empty when there is none.
std::vector<port_info> list_ports();

/// The outcome of one SA query.
struct path_answer {
  bool answered = false;        ///< a response MAD came back
  std::uint16_t mad_status = 0; ///< its status field (0: success)
  std::optional<path_record> record;
  std::string error;            ///< why there is no record
};

/// Asks the SA, through `port`, for the path from `want.sgid` to
/// `want.dgid` (or from `want.slid` to `want.dlid` when the GIDs are
/// zero) with SubnAdmGet(PathRecord). Never throws for fabric outcomes;
/// bounded by `timeout` (with `retries` resends).
path_answer query_path(const port_info& port, const path_record& want, std::chrono::milliseconds timeout,
                       int retries = 1);

}  // namespace fabric::sa
