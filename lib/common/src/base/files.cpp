#include "fabric/base/files.hpp"

#include "fabric/base/text.hpp"
#include "fabric/base/error.hpp"
#include "fabric/base/socket.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace fabric {

namespace {

bool trusted_owner(uid_t uid) noexcept { return uid == 0 || uid == ::geteuid(); }

[[noreturn]] void refuse(const std::string& what) { throw error(exit_code::usage, what); }

// A directory the user cannot use is bad input; a write that fails in a
// usable one is the system's answer.
[[noreturn]] void directory_error(int err, const std::string& what) {
  refuse(fmt::format("{}: {}", what, std::strerror(err)));
}
[[noreturn]] void write_error(int err, const std::string& what) {
  throw error(exit_code::system, fmt::format("{}: {}", what, std::strerror(err)));
}

/// Whether users other than the owner can add and rename entries in the
/// directory (its group's other than root's or the user's, or anyone).
bool others_can_write(const struct stat& st) noexcept {
  return (st.st_mode & S_IWOTH) != 0 || ((st.st_mode & S_IWGRP) != 0 && st.st_gid != 0 && st.st_gid != ::getegid());
}

// A directory others can write to is safe only when sticky (as /tmp): no
// one else can then remove or rename what is ours in it.
void check_directory_stat(const std::string& dir, const struct stat& st) {
  if (!S_ISDIR(st.st_mode)) refuse(fmt::format("{}: not a directory", printable(dir)));
  if (!trusted_owner(st.st_uid))
    refuse(fmt::format("{}: refusing a directory owned by uid {}, neither root nor this user", printable(dir), st.st_uid));
  if (!others_can_write(st) || (st.st_mode & S_ISVTX) != 0) return;
  if ((st.st_mode & S_IWOTH) != 0) refuse(fmt::format("{}: refusing a directory anyone can write to", printable(dir)));
  refuse(fmt::format("{}: refusing a directory group {} can write to", printable(dir), st.st_gid));
}

void check_link(const std::string& dir) {
  struct stat link {};
  if (::lstat(dir.c_str(), &link) != 0) directory_error(errno, fmt::format("open directory {}", printable(dir)));
  if (S_ISLNK(link.st_mode) && !trusted_owner(link.st_uid))
    refuse(fmt::format("{}: refusing a symbolic link owned by uid {}, neither root nor this user", printable(dir), link.st_uid));
}

std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void check_safe_directory(const std::string& dir) {
  check_link(dir);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) directory_error(errno, fmt::format("open directory {}", printable(dir)));
  check_directory_stat(dir, st);
}

void write_file_atomically(const std::string& path, std::string_view text, mode_t new_mode) {
  std::string parent = parent_of(path);
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (base.empty() || base == "." || base == "..") refuse(fmt::format("write {}: not a file name", printable(path)));

  check_link(parent);
  unique_fd dir(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) directory_error(errno, fmt::format("open directory {}", printable(parent)));
  struct stat dst {};
  if (::fstat(dir.get(), &dst) != 0) write_error(errno, fmt::format("stat {}", printable(parent)));
  check_directory_stat(parent, dst);  // the directory opened, not the name looked up

  struct stat old {};
  bool replacing = ::fstatat(dir.get(), base.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0;
  if (replacing && !S_ISREG(old.st_mode))
    refuse(fmt::format("write {}: refusing to replace a {}", printable(path),
                       S_ISLNK(old.st_mode) ? "symbolic link" : "non-regular file"));
  // In a directory others share, a file there may be anyone's bait.
  if (replacing && others_can_write(dst) && old.st_uid != ::geteuid())
    refuse(fmt::format("write {}: refusing to replace a file of uid {} in a directory others can write to",
                       printable(path), old.st_uid));

  std::random_device rd;
  std::string tmp;
  unique_fd file;
  for (int attempt = 0; attempt < 16 && !file; ++attempt) {
    // A short name of its own: a target name of NAME_MAX bytes still has room.
    tmp = fmt::format(".tmp.{:08x}{:08x}", rd(), rd());
    file.reset(::openat(dir.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        replacing ? 0600 : new_mode));
    if (!file && errno != EEXIST) {
      // No permission is the user's -D; a read-only or full file system the system's.
      int err = errno;
      if (err == EACCES || err == EPERM || err == ENOENT || err == ENOTDIR) directory_error(err, fmt::format("create a file in {}", printable(parent)));
      write_error(err, fmt::format("create a file in {}", printable(parent)));
    }
  }
  if (!file) directory_error(EEXIST, fmt::format("create a file in {}", printable(parent)));

  // From here on a failure removes the temporary file: nothing half-written
  // stays. Errors name the file asked for, not the temporary one.
  auto fail = [&](int err, const std::string& what) {
    file.reset();
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    write_error(err, what);
  };
  if (replacing) {
    struct stat now {};
    if (::fstat(file.get(), &now) != 0) fail(errno, fmt::format("stat {}", printable(path)));
    if ((now.st_uid != old.st_uid || now.st_gid != old.st_gid) && ::fchown(file.get(), old.st_uid, old.st_gid) != 0)
      fail(errno, fmt::format("keep the owner {}:{} of {}", old.st_uid, old.st_gid, printable(path)));
    if (::fchmod(file.get(), old.st_mode & 07777) != 0) fail(errno, fmt::format("keep the mode of {}", printable(path)));
  }
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(file.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno, fmt::format("write {}", printable(path)));
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(file.get()) != 0) fail(errno, fmt::format("sync {}", printable(path)));
  if (::close(file.release()) != 0) {
    int err = errno;
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    write_error(err, fmt::format("close {}", printable(path)));
  }
  if (::renameat(dir.get(), tmp.c_str(), dir.get(), base.c_str()) != 0) {
    int err = errno;
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    write_error(err, fmt::format("rename to {}", printable(path)));
  }
  if (::fsync(dir.get()) != 0) write_error(errno, fmt::format("sync directory {}", printable(parent)));
}

}  // namespace fabric
