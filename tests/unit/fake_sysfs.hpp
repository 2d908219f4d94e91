#pragma once
// A sysfs tree of the tests' own making: the files and links the kernel
// shows for RDMA devices, their network devices and their PCI functions,
// so that what is read there is tested without the hardware.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <unistd.h>

namespace fake {

class sysfs {
public:
  sysfs() {
    root_ = std::filesystem::path(testing::TempDir()) /
            ("sysfs-" + std::to_string(::getpid()) + "-" + std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~sysfs() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  sysfs(const sysfs&) = delete;
  sysfs& operator=(const sysfs&) = delete;

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }

  /// A file at `path` (under the root) holding `text` and a line feed, as
  /// the kernel's attributes end.
  void file(const std::string& path, const std::string& text) const {
    auto p = root_ / path;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text << '\n';
  }

  /// A symbolic link at `path` to `target`, relative as the kernel's are.
  void link(const std::string& path, const std::string& target) const {
    auto p = root_ / path;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_directory_symlink(target, p);
  }

  /// A PCI function under its slot (a root port), with the link figures
  /// of both, and an RDMA device on it whose class entry links to it, as
  /// the kernel lays them out.
  void pci_device(const std::string& device, const std::string& function, const std::string& width,
                  const std::string& speed, const std::string& max_width, const std::string& max_speed,
                  const std::string& slot_max_width = "16", const std::string& slot_max_speed = "16.0 GT/s PCIe") const {
    auto slot = "devices/pci0000:00/0000:00:02.0";
    file(std::string(slot) + "/max_link_width", slot_max_width);
    file(std::string(slot) + "/max_link_speed", slot_max_speed);
    file(std::string(slot) + "/current_link_width", width);
    file(std::string(slot) + "/current_link_speed", speed);
    auto fn = std::string(slot) + "/" + function;
    file(fn + "/current_link_width", width);
    file(fn + "/current_link_speed", speed);
    file(fn + "/max_link_width", max_width);
    file(fn + "/max_link_speed", max_speed);
    link(fn + "/infiniband/" + device + "/device", "../../../" + function);
    link("class/infiniband/" + device, "../../" + fn + "/infiniband/" + device);
  }

private:
  std::filesystem::path root_;
};

}  // namespace fake
