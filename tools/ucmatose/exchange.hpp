#pragma once
/// The messages of the data phase: -C sends and as many receives per
/// connection, each work request naming its connection, direction and
/// sequence number; their completions counted and, with --verify, their
/// payloads checked. Owns only the work requests being posted.

#include "connections.hpp"
#include "devices.hpp"
#include "options.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ucmatose {

/// A work request id: connection index, send or receive, sequence number.
std::uint64_t make_wr_id(std::size_t index, std::uint32_t seq, bool send) noexcept;

/// Posts connection i's receives, one per message, on `qp`. Called on the
/// QP helper's thread too: it writes nothing shared.
void post_recvs(ibv_qp* qp, std::size_t i, const device_resources& dev, const options& o);

/// Posts sends and counts completions for every connection of a table.
class message_exchange {
public:
  message_exchange(const options& o, connection_table& table);

  /// Posts connection i's -C sends; a failure to post fails it.
  void post_sends(std::size_t i);
  /// Counts one completion into its connection's report entry.
  void on_completion(const ibv_wc& wc);

private:
  const options& o_;
  connection_table& table_;
  std::uint32_t count_;
  std::vector<ibv_send_wr> wrs_;
  std::vector<ibv_sge> sges_;
};

}  // namespace ucmatose
