#pragma once
/// The messages of the data phase: -C sends per connection posted, and
/// the completions of sends and receives counted and, with --verify, the
/// payloads checked (where each message is: messages.hpp). Owns only the
/// work requests being posted.

#include "connections.hpp"
#include "options.hpp"

#include "fabric/verbs/verbs.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ucmatose {

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
