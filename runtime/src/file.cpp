#include "postbox/runtime/file.hpp"

#include <fstream>
#include <system_error>

#include "postbox/runtime/check.hpp"

namespace postbox {

namespace {

void check_path(const std::filesystem::path& path, const std::string& what) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  // status() reports a missing path (or one through a non-directory) as not_found with ec set;
  // any other failure (a parent directory without search permission) leaves the type unknown.
  if (st.type() == std::filesystem::file_type::not_found) throw InputError(what + ": no such file");
  if (ec) throw InputError("cannot read " + what);
  if (!std::filesystem::is_regular_file(st)) throw InputError(what + " is not a regular file");
}

}  // namespace

void check_regular_file(const std::filesystem::path& path, const std::string& what) {
  check_path(path, what);
  if (!std::ifstream(path, std::ios::binary)) throw InputError("cannot read " + what);
}

std::string read_regular_file(const std::filesystem::path& path, const std::string& what) {
  check_path(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read " + what);
  // Chunked reads rather than `out << in.rdbuf()`, which sets failbit when it copies nothing and
  // so would report an empty file as unreadable. A failed read (the filebuf throws, the stream
  // catches it) sets badbit and makes the next read return nothing.
  std::string text;
  char chunk[1 << 14];
  while (in.read(chunk, sizeof chunk), in.gcount() > 0) text.append(chunk, static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw InputError("cannot read " + what);
  return text;
}

}  // namespace postbox
