#pragma once
/// Text that reaches a terminal: bytes from a peer or the user made safe
/// to print.

#include <string>
#include <string_view>

namespace fabric {

/// Bytes from a peer or the user made safe for a terminal: printable
/// ASCII as is, every other byte (control characters, escape sequences,
/// bytes that are not ASCII) as \xNN. Every message that quotes input
/// (options, file and host names, peer data) passes it through this; the
/// result is printable, so escaping twice changes nothing.
std::string printable(std::string_view bytes);

}  // namespace fabric
