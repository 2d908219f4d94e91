// Work request ids, receive slots and the receives of a connection.
#include "messages.hpp"

#include <vector>

namespace ucmatose {

namespace {
constexpr std::uint64_t send_bit = 1ULL << 32;
}  // namespace

std::uint64_t make_wr_id(std::size_t index, std::uint32_t seq, bool send) noexcept {
  return (static_cast<std::uint64_t>(index) << 33) | (send ? send_bit : 0) | seq;
}

message_ref message_of(std::uint64_t wr_id) noexcept {
  return {static_cast<std::size_t>(wr_id >> 33), static_cast<std::uint32_t>(wr_id & 0xffffffffu),
          (wr_id & send_bit) != 0};
}

std::size_t recv_offset(const options& o, std::size_t index, std::uint32_t seq) noexcept {
  auto count = static_cast<std::size_t>(o.messages());
  std::size_t slot = o.verify ? index * count + seq : 0;
  return slot * static_cast<std::size_t>(o.size);
}

void post_recvs(ibv_qp* qp, std::size_t index, const fabric::registered_buffer& recv_buf, const options& o) {
  auto count = static_cast<std::uint32_t>(o.messages());
  if (count == 0) return;
  auto size = static_cast<std::uint32_t>(o.size);
  std::vector<ibv_sge> sges(count);
  std::vector<ibv_recv_wr> wrs(count);
  for (std::uint32_t s = 0; s < count; ++s) {
    sges[s] = {recv_buf.addr() + recv_offset(o, index, s), size, recv_buf.lkey()};
    wrs[s].wr_id = make_wr_id(index, s, false);
    wrs[s].sg_list = &sges[s];
    wrs[s].num_sge = 1;
    wrs[s].next = s + 1 < count ? &wrs[s + 1] : nullptr;
  }
  fabric::post_recv(qp, wrs[0]);
}

}  // namespace ucmatose
