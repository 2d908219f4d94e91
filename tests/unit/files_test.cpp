// fabric::write_file_atomically: whole files, kept modes and owners, and
// no write through a directory someone else controls.
#include "fabric/base/error.hpp"
#include "fabric/base/files.hpp"

#include <gtest/gtest.h>

#include <climits>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

constexpr uid_t nobody = 65534;

class files : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "files_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static mode_t mode_of(const fs::path& p) {
    struct stat st {};
    ::lstat(p.c_str(), &st);
    return st.st_mode & 07777;
  }
  /// The files in the directory, to see that no temporary one stayed.
  [[nodiscard]] std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  static fabric::exit_code code_of(const std::string& path, const std::string& text) {
    try {
      fabric::write_file_atomically(path, text);
    } catch (const fabric::error& e) {
      return e.code();
    }
    return fabric::exit_code::ok;
  }

  fs::path dir_;
};

TEST_F(files, a_new_file_gets_its_text_and_mode) {
  auto p = dir_ / "a.cfg";
  fabric::write_file_atomically(p, "one\n");
  EXPECT_EQ(read(p), "one\n");
  EXPECT_EQ(mode_of(p) & ~0022u, 0644u & ~0022u);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(files, a_write_that_fails_names_the_file_and_leaves_nothing) {
  // A file size limit makes the write fail (EFBIG) as a full disk would.
  rlimit was{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &was), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = was;
  small.rlim_cur = 4;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  auto p = dir_ / "page.html";
  std::string what;
  fabric::exit_code code = fabric::exit_code::ok;
  try {
    fabric::write_file_atomically(p, "more than four bytes\n");
  } catch (const fabric::error& e) {
    what = e.what();
    code = e.code();
  }
  ::setrlimit(RLIMIT_FSIZE, &was);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(code, fabric::exit_code::system);
  EXPECT_EQ(what.rfind("write " + p.string() + ": ", 0), 0u) << what;  // the file asked for, not the temporary one
  EXPECT_EQ(entries(), 0u);
}

TEST_F(files, a_name_of_name_max_bytes_is_written) {
  // The temporary file's name must not be longer than the target's.
  auto p = dir_ / (std::string(NAME_MAX - 5, 'p') + ".prom");
  fabric::write_file_atomically(p, "fabric_health_ok 1\n");
  EXPECT_EQ(read(p), "fabric_health_ok 1\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(files, a_replaced_file_keeps_its_mode) {
  auto p = dir_ / "a.cfg";
  std::ofstream(p) << "old\n";
  ::chmod(p.c_str(), 0600);
  fabric::write_file_atomically(p, "new\n");
  EXPECT_EQ(read(p), "new\n");
  EXPECT_EQ(mode_of(p), 0600u);
  EXPECT_EQ(entries(), 1u);
}

TEST_F(files, a_replaced_file_keeps_its_owner) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to own a file as another user";
  auto p = dir_ / "a.cfg";
  std::ofstream(p) << "old\n";
  ASSERT_EQ(::chown(p.c_str(), nobody, nobody), 0);
  fabric::write_file_atomically(p, "new\n");
  struct stat st {};
  ::stat(p.c_str(), &st);
  EXPECT_EQ(st.st_uid, nobody);
  EXPECT_EQ(st.st_gid, nobody);
}

TEST_F(files, a_symlink_at_the_target_is_refused_and_left_alone) {
  auto target = dir_ / "elsewhere";
  std::ofstream(target) << "precious\n";
  fs::create_symlink(target, dir_ / "a.cfg");
  EXPECT_EQ(code_of(dir_ / "a.cfg", "new\n"), fabric::exit_code::usage);
  EXPECT_EQ(read(target), "precious\n");
  EXPECT_EQ(entries(), 2u);
}

TEST_F(files, a_directory_anyone_can_write_to_is_refused) {
  ::chmod(dir_.c_str(), 0777);
  EXPECT_EQ(code_of(dir_ / "a.cfg", "x"), fabric::exit_code::usage);
  EXPECT_EQ(entries(), 0u);
}

TEST_F(files, a_sticky_directory_anyone_can_write_to_takes_a_new_file_and_our_own) {
  // As /tmp: no one else can remove or rename what is ours there.
  ::chmod(dir_.c_str(), 01777);
  auto p = dir_ / "sweep.html";
  EXPECT_EQ(code_of(p, "one\n"), fabric::exit_code::ok);
  EXPECT_EQ(code_of(p, "two\n"), fabric::exit_code::ok);
  EXPECT_EQ(read(p), "two\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(files, a_sticky_directory_anyone_can_write_to_keeps_another_users_file) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to own a file as another user";
  ::chmod(dir_.c_str(), 01777);
  auto p = dir_ / "sweep.html";
  std::ofstream(p) << "bait\n";
  ASSERT_EQ(::chown(p.c_str(), nobody, nobody), 0);
  EXPECT_EQ(code_of(p, "report\n"), fabric::exit_code::usage);
  EXPECT_EQ(read(p), "bait\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(files, a_directory_owned_by_another_user_is_refused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  ASSERT_EQ(::chown(dir_.c_str(), nobody, nobody), 0);
  EXPECT_EQ(code_of(dir_ / "a.cfg", "x"), fabric::exit_code::usage);
  EXPECT_EQ(entries(), 0u);
}

TEST_F(files, a_symlinked_directory_owned_by_another_user_is_refused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a link away";
  auto real = dir_ / "real";
  fs::create_directory(real);
  auto link = dir_ / "link";
  fs::create_directory_symlink(real, link);
  ASSERT_EQ(::lchown(link.c_str(), nobody, nobody), 0);
  EXPECT_EQ(code_of(link / "a.cfg", "x"), fabric::exit_code::usage);
  EXPECT_FALSE(fs::exists(real / "a.cfg"));
  // The same link owned by root (or us) is fine.
  ASSERT_EQ(::lchown(link.c_str(), 0, 0), 0);
  EXPECT_EQ(code_of(link / "a.cfg", "x"), fabric::exit_code::ok);
  EXPECT_EQ(read(real / "a.cfg"), "x");
}

TEST_F(files, a_missing_directory_is_a_usage_error) {
  EXPECT_EQ(code_of(dir_ / "none" / "a.cfg", "x"), fabric::exit_code::usage);
}

TEST_F(files, check_safe_directory_names_the_reason) {
  ::chmod(dir_.c_str(), 0777);
  try {
    fabric::check_safe_directory(dir_);
    FAIL() << "a world-writable directory passed";
  } catch (const fabric::error& e) {
    EXPECT_NE(std::string(e.what()).find("anyone can write"), std::string::npos) << e.what();
  }
}

}  // namespace
