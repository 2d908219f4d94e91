#pragma once
/// Files a tool writes for the user (ib_acme -A/-O): whole or not at all,
/// and never through a directory someone else controls.

#include <sys/types.h>

#include <string>
#include <string_view>

namespace fabric {

/// Throws a usage error unless `dir` is a directory a tool may write into
/// on the user's behalf: owned by root or by the effective user, not
/// writable by others (nor by a group other than root's or the user's)
/// unless sticky (as /tmp: no one else can then remove or rename an entry
/// of ours), and, when `dir` is a symbolic link, the link too owned by root
/// or the user.
void check_safe_directory(const std::string& dir);

/// Writes `text` to `path` as a whole or not at all: a temporary file in the
/// same directory (a short name of its own, ".tmp." and 16 hex digits, so
/// that any valid name can be written), synced, renamed into place, then
/// the directory synced.
/// The directory must pass check_safe_directory. A file it replaces keeps
/// its mode and owner; a new one gets `new_mode` (less the umask); a
/// symbolic link or other non-regular file at `path` is refused, and so is
/// a file of another user in a sticky directory others can write to.
/// Errors: usage for a directory that is missing, unsafe or not writable
/// by the user; system for a failed write, sync or rename.
void write_file_atomically(const std::string& path, std::string_view text, mode_t new_mode = 0644);

}  // namespace fabric
