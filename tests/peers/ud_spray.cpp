// A stranger on the wire for the UD tests of fabric-sweep: from the
// address FROM (on a local RDMA device), it sends datagrams without a
// pause to the QPs of the given numbers at the host of address TO, a batch
// to each in turn, for MS milliseconds, with rdma_cm's UDP Q_Key: a flood
// of strangers' datagrams, as anyone who learned those numbers could send.
//   ud_spray FROM TO MS QPN...
// Prints how many it sent; exits 0, 1 on failure, 2 on bad use.
#include "stranger_qp.hpp"

#include "fabric/cm/cm.hpp"
#include "fabric/verbs/addr.hpp"

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <vector>

int main(int argc, char** argv) try {
  if (argc < 5) {
    fmt::print(stderr, "usage: ud_spray FROM TO MS QPN...\n");
    return 2;
  }
  auto ms = std::chrono::milliseconds(std::stoul(argv[3]));
  std::vector<std::uint32_t> qpns;
  for (int i = 4; i < argc; ++i) qpns.push_back(static_cast<std::uint32_t>(std::stoul(argv[i])));

  // The device that holds FROM.
  fabric::cm_channel ch;
  fabric::addr_query q;
  q.node = argv[1];
  q.flags = RAI_PASSIVE | RAI_NUMERICHOST;
  q.port_space = RDMA_PS_UDP;
  q.qp_type = IBV_QPT_UD;
  auto from = fabric::resolve(q);
  fabric::cm_id id = ch.create_id(RDMA_PS_UDP);
  fabric::check_rc(rdma_bind_addr(id.get(), from->ai_src_addr), "rdma_bind_addr");
  if (id->verbs == nullptr) throw std::runtime_error(fmt::format("{}: not on an RDMA device", argv[1]));

  peers::stranger spray(id->verbs, argv[1], 64);
  auto n = spray.spray(peers::roce_gid(argv[2]), qpns, fabric::deadline::after(ms));
  fmt::print("sprayed {} datagrams\n", n);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "ud_spray: {}\n", e.what());
  return 1;
}
