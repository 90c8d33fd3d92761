// file.hpp: read_regular_file reads a regular file whole and refuses everything else with one
// line that names the file as the caller does.
#include "postbox/runtime/file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "postbox/runtime/check.hpp"

#include "input_error.hpp"
#include "scratch_dir.hpp"

namespace postbox {
namespace {

using testing_support::input_error_of;

// A fresh directory per test, removed with what it holds.
class ReadRegularFile : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::string& name, const std::string& bytes) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  testing_support::ScratchDir scratch_{"postbox-file-test"};
  const std::filesystem::path& dir_ = scratch_.path();
};

TEST_F(ReadRegularFile, ReturnsTheBytesExactlyNulIncluded) {
  const std::string bytes("a\0b\r\n\xff\0", 7);
  EXPECT_EQ(read_regular_file(write("bytes", bytes), "test file"), bytes);
}

TEST_F(ReadRegularFile, AnEmptyFileIsEmptyTextNotAnError) {
  EXPECT_EQ(read_regular_file(write("empty", ""), "test file"), "");
}

TEST_F(ReadRegularFile, ALargerFileThanOneChunkIsReadWhole) {
  std::string bytes(100000, 'x');
  for (std::size_t i = 0; i < bytes.size(); i += 997) bytes[i] = static_cast<char>(i % 251);
  EXPECT_EQ(read_regular_file(write("large", bytes), "test file"), bytes);
}

TEST_F(ReadRegularFile, AMissingFileIsNoSuchFile) {
  const auto path = dir_ / "absent";
  EXPECT_EQ(input_error_of([&] { read_regular_file(path, "test file 'absent'"); }), "test file 'absent': no such file");
}

TEST_F(ReadRegularFile, ADirectoryIsNotARegularFile) {
  EXPECT_EQ(input_error_of([&] { read_regular_file(dir_, "test file 'dir'"); }), "test file 'dir' is not a regular file");
}

TEST_F(ReadRegularFile, ADeviceIsRefusedUnread) {
  // /dev/zero never ends: reading it would not return.
  EXPECT_EQ(input_error_of([] { read_regular_file("/dev/zero", "test file '/dev/zero'"); }),
            "test file '/dev/zero' is not a regular file");
}

TEST_F(ReadRegularFile, AFifoIsRefusedUnopened) {
  // Opening a FIFO with no writer would block.
  const auto path = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(input_error_of([&] { read_regular_file(path, "test file 'fifo'"); }), "test file 'fifo' is not a regular file");
}

TEST_F(ReadRegularFile, AFileWithoutReadPermissionCannotBeRead) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a file whatever its mode";
  const auto path = write("secret", "x");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  EXPECT_EQ(input_error_of([&] { read_regular_file(path, "test file 'secret'"); }), "cannot read test file 'secret'");
}

// check_regular_file refuses what read_regular_file refuses, with the same messages, and accepts
// a readable regular file without reading it.
TEST_F(ReadRegularFile, CheckRefusesAsTheReaderDoes) {
  EXPECT_EQ(input_error_of([&] { check_regular_file(dir_ / "absent", "f"); }), "f: no such file");
  EXPECT_EQ(input_error_of([&] { check_regular_file(dir_, "f"); }), "f is not a regular file");
  EXPECT_EQ(input_error_of([] { check_regular_file("/dev/zero", "f"); }), "f is not a regular file");
  EXPECT_NO_THROW(check_regular_file(write("ok", "x"), "f"));
}

}  // namespace
}  // namespace postbox
