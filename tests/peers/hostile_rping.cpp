// A misbehaving rping client for the fabric tests: it connects like rping
// and then breaks the protocol in one chosen way.
//   hostile_rping ADDR short      a 4-byte message instead of 16
//   hostile_rping ADDR long       a 64-byte message instead of 16
//   hostile_rping ADDR oversize   advertises a buffer larger than any -S
//   hostile_rping ADDR badrkey    advertises a buffer with a bogus rkey
//   hostile_rping ADDR flood      sends 8 messages without waiting for an answer
// It exits 0 once it has done its damage and the server reacted.
#include "fabric/cm/cm.hpp"
#include "fabric/cm/rc.hpp"
#include "fabric/verbs/verbs.hpp"

#include <endian.h>
#include <fmt/format.h>

#include <cstring>
#include <string>

int main(int argc, char** argv) try {
  if (argc != 3) {
    fmt::print(stderr, "usage: hostile_rping ADDR short|long|oversize|badrkey|flood\n");
    return 2;
  }
  std::string mode = argv[2];
  const fabric::wait_limit limit(std::chrono::milliseconds(5000));
  fabric::rc_client c = fabric::prepare_rc_client({argv[1], "", 7174}, {}, limit);
  fabric::registered_buffer msg(c.endpoint->pd(), 64, IBV_ACCESS_LOCAL_WRITE);
  fabric::registered_buffer data(c.endpoint->pd(), 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  fabric::connect_rc(c, limit.next());

  std::uint64_t addr = htobe64(data.addr());
  std::uint32_t rkey = htobe32(mode == "badrkey" ? data.rkey() ^ 0x5a5a5a : data.rkey());
  std::uint32_t size = htobe32(mode == "oversize" ? 1u << 30 : 64u);
  std::memcpy(msg.data(), &addr, 8);
  std::memcpy(msg.data() + 8, &rkey, 4);
  std::memcpy(msg.data() + 12, &size, 4);

  // A flood is one post of messages that follow each other on the wire, so
  // the second arrives while the server READs the buffer the first named.
  ibv_sge sge = msg.sge(mode == "short" ? 4 : mode == "long" ? 64 : 16);
  ibv_send_wr wrs[8]{};
  const int n = mode == "flood" ? 8 : 1;
  for (int k = 0; k < n; ++k) {
    wrs[k].opcode = IBV_WR_SEND;
    wrs[k].send_flags = k == n - 1 ? IBV_SEND_SIGNALED : 0;
    wrs[k].sg_list = &sge;
    wrs[k].num_sge = 1;
    wrs[k].next = k == n - 1 ? nullptr : &wrs[k + 1];
  }
  fabric::post_send(c.endpoint->qp(), wrs[0]);
  ibv_wc wc[4];
  c.endpoint->cq().wait(wc, limit.next());
  // Give the server time to notice before we go.
  c.channel.next(fabric::deadline::after(std::chrono::milliseconds(1000)));
  fmt::print("hostile_rping: sent a {} message\n", mode);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "hostile_rping: {}\n", e.what());
  return 1;
}
