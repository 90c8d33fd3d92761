#include "postbox/emulator/mapped_storage.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <mutex>
#include <new>
#include <unordered_map>

#include "postbox/runtime/check.hpp"

namespace postbox::sim {
namespace {

// The innermost scope's directory on this thread, or null.
thread_local const std::string* current_dir = nullptr;

// The file-backed allocations now live: address → bytes. A deallocation looks its pointer up
// here (it may come after the scope ended, on another thread), so the registry is global.
struct Registry {
  std::mutex mu;
  std::unordered_map<void*, std::size_t> live;
  std::size_t bytes = 0;
  std::size_t peak = 0;  // since the outermost scope on some thread was last made
};
Registry& registry() {
  static Registry r;
  return r;
}

std::string why(int err) { return std::strerror(err); }

void* map_file(const std::string& dir, std::size_t bytes) {
  std::string path = dir + "/postbox-sim-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw InputError("--save-mem: cannot create a file in '" + dir + "': " + why(errno));
  ::unlink(path.c_str());  // the mapping keeps the file; nothing is left behind
  // fallocate(2), not posix_fallocate: where the file system cannot reserve blocks, glibc's
  // emulation would write every block; a sparse file (ftruncate) is used there instead, and a
  // full disk then shows as SIGBUS at a write, as in any program that writes through a mapping.
  int err = ::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  if (err == EOPNOTSUPP) err = ::ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  if (err != 0) {
    ::close(fd);
    throw InputError("--save-mem: cannot reserve " + std::to_string(bytes) + " bytes in '" + dir + "': " + why(err));
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int map_err = errno;
  ::close(fd);
  if (p == MAP_FAILED) throw InputError("--save-mem: cannot map " + std::to_string(bytes) + " bytes: " + why(map_err));
  return p;
}

}  // namespace

MappedStorage::MappedStorage(std::string dir) : dir_(std::move(dir)), outer_(current_dir) {
  if (dir_.empty()) throw InputError("--save-mem: the directory is empty");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec)) throw InputError("--save-mem: '" + dir_ + "' is not a directory");
  if (::access(dir_.c_str(), W_OK | X_OK) != 0)
    throw InputError("--save-mem: cannot create files in '" + dir_ + "': " + why(errno));
  if (current_dir == nullptr) {  // the outermost scope on this thread: its peak starts here
    Registry& r = registry();
    const std::lock_guard<std::mutex> lock(r.mu);
    r.peak = r.bytes;
  }
  current_dir = &dir_;
}

MappedStorage::~MappedStorage() { current_dir = outer_; }

std::size_t MappedStorage::mapped_bytes() noexcept {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  return r.bytes;
}

bool MappedStorage::active() noexcept { return current_dir != nullptr; }

const std::string* MappedStorage::current() noexcept { return current_dir; }

MappedStorage::Enter::Enter(const std::string* dir) noexcept : outer_(current_dir) { current_dir = dir; }

MappedStorage::Enter::~Enter() { current_dir = outer_; }

bool MappedStorage::is_mapped(const void* p) noexcept {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  return r.live.find(const_cast<void*>(p)) != r.live.end();
}

std::size_t MappedStorage::peak_bytes() const noexcept {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  return r.peak;
}

namespace detail {

void* map_allocate(std::size_t bytes) {
  if (current_dir == nullptr || bytes < kMappedMin) return ::operator new(bytes);
  void* p = map_file(*current_dir, bytes);
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  r.live.emplace(p, bytes);
  r.bytes += bytes;
  r.peak = std::max(r.peak, r.bytes);
  return p;
}

void map_deallocate(void* p, std::size_t bytes) noexcept {
  if (bytes >= kMappedMin) {
    Registry& r = registry();
    std::unique_lock<std::mutex> lock(r.mu);
    const auto it = r.live.find(p);
    if (it != r.live.end()) {
      PB_CHECK(it->second == bytes, "MapAlloc: an array freed with another size than it was allocated with");
      r.bytes -= bytes;
      r.live.erase(it);
      lock.unlock();
      ::munmap(p, bytes);
      return;
    }
  }
  ::operator delete(p);
}

}  // namespace detail
}  // namespace postbox::sim
