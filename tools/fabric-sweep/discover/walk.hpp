#pragma once
/// The MAD walk: the subnet read through rdma-core's own libraries,
/// libibnetdisc for the nodes and links, libibmad for each switch's
/// forwarding table and each connected port's counters. Needs root (the
/// umad device), as ibnetdiscover does.

#include "subnet.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

namespace sweep::subnet {

/// What to walk from, and how long each MAD may take.
struct walk_options {
  std::string device;  ///< --ca: the CA to walk from (default: the first with an InfiniBand port)
  int port = 0;        ///< --port: its port (0: the first active)
  std::chrono::milliseconds timeout{1000};  ///< --timeout: the wait for each MAD's answer
  bool counters = true;                     ///< false with --no-counters
};

/// A line of progress for people: called at most once a second, and only
/// once the walk has taken a second.
using progress_sink = std::function<void(std::string_view)>;

/// Walks the subnet. Throws fabric::error: no_device without an
/// InfiniBand CA or port, or without access to it (not root); timeout
/// when not even the first node answered; interrupted on Ctrl-C. A node
/// that does not answer is named in the model (fabric::silent, or its
/// node's error) and the walk goes on.
fabric walk(const walk_options& opt, const progress_sink& progress);

}  // namespace sweep::subnet
