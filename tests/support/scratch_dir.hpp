// A directory of its own for a test's files, removed with what it holds when the object goes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace postbox::testing_support {

class ScratchDir {
 public:
  // <temporary directory>/<prefix>.<pid>.<current test's name>, emptied if it was left behind.
  explicit ScratchDir(const std::string& prefix) : path_(std::filesystem::temp_directory_path() / name(prefix)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  static std::string name(const std::string& prefix) {
    std::string n = prefix + "." + std::to_string(::getpid());
    if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info(); info != nullptr) {
      n += ".";
      n += info->name();
    }
    return n;
  }
  std::filesystem::path path_;
};

}  // namespace postbox::testing_support
