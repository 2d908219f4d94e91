#include "fabric/acm/sa.hpp"

#include "fabric/base/wait.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <infiniband/umad.h>
#include <infiniband/umad_sa.h>
#include <infiniband/umad_types.h>

#include <endian.h>

#include <cstring>
#include <random>
#include <vector>

namespace fabric::sa {

namespace {

constexpr std::uint16_t attr_path_record = 0x0035;
constexpr std::uint8_t method_get = 0x01;
constexpr std::uint8_t method_get_resp = 0x81;
// PathRecord component mask bits (IBA 15.2.5.16).
constexpr std::uint64_t comp_dgid = 1ull << 2;
constexpr std::uint64_t comp_sgid = 1ull << 3;
constexpr std::uint64_t comp_dlid = 1ull << 4;
constexpr std::uint64_t comp_slid = 1ull << 5;

bool zero_gid(const std::array<std::uint8_t, 16>& g) {
  for (auto b : g)
    if (b) return false;
  return true;
}

/// An open umad port with a registered SA agent; closed on destruction.
class sa_agent {
public:
  sa_agent(const port_info& port, std::string& error) {
    fd_ = umad_open_port(port.ca.c_str(), port.port);
    if (fd_ < 0) {
      error = fmt::format("open umad port {}/{}: {}", port.ca, port.port, std::strerror(-fd_));
      return;
    }
    agent_ = umad_register(fd_, UMAD_CLASS_SUBN_ADM, UMAD_SA_CLASS_VERSION, UMAD_RMPP_VERSION, nullptr);
    if (agent_ < 0) error = fmt::format("open umad port {}/{}: register SA agent: {}", port.ca, port.port, std::strerror(-agent_));
  }
  sa_agent(const sa_agent&) = delete;
  sa_agent& operator=(const sa_agent&) = delete;
  ~sa_agent() {
    if (agent_ >= 0) umad_unregister(fd_, agent_);
    if (fd_ >= 0) umad_close_port(fd_);
  }
  [[nodiscard]] bool ok() const { return fd_ >= 0 && agent_ >= 0; }
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] int agent() const { return agent_; }

private:
  int fd_ = -1;
  int agent_ = -1;
};

}  // namespace

std::array<std::uint8_t, 16> port_info::gid() const {
  std::array<std::uint8_t, 16> g{};
  for (int i = 0; i < 8; ++i) {
    g[i] = static_cast<std::uint8_t>(gid_prefix >> (56 - 8 * i));
    g[8 + i] = static_cast<std::uint8_t>(port_guid >> (56 - 8 * i));
  }
  return g;
}

std::string describe_mad_status(std::uint16_t status) {
  if (status == 0) return "success";
  // IBA 13.4.7: bit 0 busy, bit 1 redirect, bits 2-4 an invalid-field
  // code; bits 8-14 the class's own code (IBA 15.2.5.1 for the SA).
  static constexpr std::string_view invalid_field[] = {
      "",  "bad base or class version", "method not supported", "method and attribute not supported",
      "reserved invalid-field code 4", "reserved invalid-field code 5", "reserved invalid-field code 6",
      "invalid attribute or modifier value"};
  static constexpr std::string_view sa_codes[] = {"",           "no resources",          "invalid request",
                                                  "no records", "too many records",      "invalid GID",
                                                  "insufficient components", "request denied", "priority suggested"};
  std::vector<std::string> parts;
  if ((status & 0x0001) != 0) parts.emplace_back("busy");
  if ((status & 0x0002) != 0) parts.emplace_back("redirect required");
  if (unsigned f = (status >> 2) & 0x7; f != 0) parts.emplace_back(invalid_field[f]);
  if (unsigned c = (status >> 8) & 0x7f; c != 0)
    parts.push_back(c < std::size(sa_codes) ? std::string(sa_codes[c]) : fmt::format("SA code {}", c));
  if (parts.empty()) parts.emplace_back("reserved status bits");
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string state_name(unsigned state) {
  switch (state) {
    case 1: return "Down";
    case 2: return "Init";
    case 3: return "Armed";
    case 4: return "Active";
    case 5: return "ActiveDefer";
    default: return fmt::format("state {}", state);
  }
}

std::vector<port_info> list_ports() {
  std::vector<port_info> out;
  char names[32][UMAD_CA_NAME_LEN];
  int n = umad_get_cas_names(names, 32);
  for (int i = 0; i < n; ++i) {
    umad_ca_t ca{};
    if (umad_get_ca(names[i], &ca) != 0) continue;
    for (int p = 0; p <= ca.numports && p < UMAD_CA_MAX_PORTS; ++p) {
      const umad_port_t* up = ca.ports[p];
      if (!up) continue;
      port_info pi;
      pi.ca = up->ca_name;
      pi.port = up->portnum;
      pi.link_layer = up->link_layer;
      // umad says "IB" where verbs and sysfs say "InfiniBand"; speak one word.
      if (pi.link_layer == "IB" || pi.link_layer.empty()) pi.link_layer = "InfiniBand";
      pi.state = up->state;
      pi.phys_state = up->phys_state;
      pi.rate = up->rate;
      pi.base_lid = up->base_lid;
      pi.lmc = up->lmc;
      pi.sm_lid = up->sm_lid;
      pi.sm_sl = up->sm_sl;
      pi.capmask = be32toh(up->capmask);
      pi.gid_prefix = be64toh(up->gid_prefix);
      pi.port_guid = be64toh(up->port_guid);
      for (unsigned k = 0; k < up->pkeys_size; ++k)
        if (up->pkeys[k] & 0x7fff) pi.pkeys.push_back(up->pkeys[k]);
      out.push_back(std::move(pi));
    }
    umad_release_ca(&ca);
  }
  return out;
}

path_answer query_path(const port_info& port, const path_record& want, std::chrono::milliseconds timeout,
                       int retries) {
  path_answer ans;
  if (port.sm_lid == 0) {
    ans.error = "no subnet manager known to the port";
    return ans;
  }
  sa_agent agent(port, ans.error);
  if (!agent.ok()) return ans;

  std::vector<std::uint8_t> buf(umad_size() + 2048);
  auto* mad = static_cast<umad_sa_packet*>(umad_get_mad(buf.data()));
  std::random_device rd;
  std::uint64_t tid = (std::uint64_t{rd()} << 32 | rd()) & 0x00ffffffffffffffull;
  mad->mad_hdr.base_version = 1;
  mad->mad_hdr.mgmt_class = UMAD_CLASS_SUBN_ADM;
  mad->mad_hdr.class_version = UMAD_SA_CLASS_VERSION;
  mad->mad_hdr.method = method_get;
  mad->mad_hdr.tid = htobe64(tid);
  mad->mad_hdr.attr_id = htobe16(attr_path_record);
  mad->attr_offset = htobe16(path_record_size / 8);
  path_record req;
  std::uint64_t mask = 0;
  if (!zero_gid(want.dgid)) {
    req.dgid = want.dgid;
    mask |= comp_dgid;
  } else {
    req.dlid = want.dlid;
    mask |= comp_dlid;
  }
  if (!zero_gid(want.sgid)) {
    req.sgid = want.sgid;
    mask |= comp_sgid;
  } else if (want.slid) {
    req.slid = want.slid;
    mask |= comp_slid;
  }
  mad->comp_mask = htobe64(mask);
  auto raw = encode_path(req);
  std::memcpy(mad->data, raw.data(), raw.size());
  umad_set_addr(buf.data(), static_cast<int>(port.sm_lid), 1, static_cast<int>(port.sm_sl), UMAD_QKEY);

  int per_try = static_cast<int>(std::max<long long>(1, timeout.count() / (retries + 1)));
  if (int rc = umad_send(agent.fd(), agent.agent(), buf.data(), 256, per_try, retries); rc < 0) {
    ans.error = fmt::format("send PathRecord query: {}", std::strerror(-rc));
    return ans;
  }
  auto until = deadline::after(timeout + std::chrono::milliseconds(per_try));
  std::vector<std::uint8_t> rbuf(umad_size() + 2048);
  for (;;) {
    if (until.expired()) {
      ans.error = "no answer from the SA in time";
      return ans;
    }
    // The wait is ours, so that Ctrl-C ends it; umad_recv then only reads.
    // In short slices: a umad shim (umad2sim) may poll our descriptors its
    // own way and miss the interrupt's.
    throw_if_interrupted();
    if (!wait_readable(agent.fd(), deadline::after(std::chrono::milliseconds(100)).min(until))) continue;
    int len = static_cast<int>(rbuf.size() - umad_size());
    int rc = umad_recv(agent.fd(), rbuf.data(), &len, 0);
    if (rc < 0) {
      if (rc == -ETIMEDOUT || rc == -EAGAIN || rc == -EINTR) continue;
      ans.error = fmt::format("receive from the SA: {}", std::strerror(-rc));
      return ans;
    }
    if (int st = umad_status(rbuf.data()); st != 0) {
      ans.error = st == ETIMEDOUT ? "no answer from the SA (timed out)" : fmt::format("SA query failed: {}", std::strerror(st));
      return ans;
    }
    auto* resp = static_cast<umad_sa_packet*>(umad_get_mad(rbuf.data()));
    // The MAD layer owns the upper 32 bits of a TID (its agent number).
    if ((be64toh(resp->mad_hdr.tid) & 0xffffffffu) != (tid & 0xffffffffu) || resp->mad_hdr.method != method_get_resp)
      continue;
    ans.answered = true;
    ans.mad_status = be16toh(resp->mad_hdr.status);
    if (ans.mad_status != 0) {
      ans.error = fmt::format("SA answered with status 0x{:04x} ({})", ans.mad_status, describe_mad_status(ans.mad_status));
      return ans;
    }
    ans.record = decode_path(std::span<const std::uint8_t, path_record_size>(resp->data, path_record_size));
    return ans;
  }
}

}  // namespace fabric::sa
