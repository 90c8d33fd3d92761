// Reading a file a user names (a calibration file, a profile, a plan, a network graph, a noise
// trace): one function, so every reader refuses the same paths with the same messages.
#pragma once

#include <filesystem>
#include <string>

namespace postbox {

// The whole content of the regular file at `path`, byte for byte (NUL bytes included). `what`
// names the file in messages as the caller's user knows it ("calibration file /x/c.json",
// "--file 'plan.json'"). Throws InputError, one line:
//   "<what>: no such file"           nothing at path
//   "<what> is not a regular file"   a directory, a FIFO or a device (/dev/zero would be read
//                                    forever, a FIFO would block): refused before it is opened
//   "cannot read <what>"             it cannot be opened or a read fails (permissions, I/O)
std::string read_regular_file(const std::filesystem::path& path, const std::string& what);

// The checks of read_regular_file without the read, for a file another reader will open (a GOAL
// file read in pieces): the same three messages, the last when it cannot be opened.
void check_regular_file(const std::filesystem::path& path, const std::string& what);

}  // namespace postbox
