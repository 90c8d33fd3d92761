// Storage for the emulator's large per-op and per-rank arrays (a Schedule's, and the engine's
// state per op and per rank), which can live in files instead of anonymous memory: LogGOPSim's
// --save-mem, for schedules larger than memory (`postbox sim --save-mem`, docs/emulator.md).
//
//   {
//     postbox::sim::MappedStorage scope("/var/tmp");  // while it lives, on this thread
//     Schedule s = ...;                                // its large arrays are file-backed
//     SimResult r = simulate(s, machine);             // and so is the engine's state
//   }
//
// While a MappedStorage lives, every allocation of at least kMappedMin bytes made by an
// Array<T> on the thread that made the scope is a shared mapping of a file of its own, created
// in the scope's directory and unlinked at once (nothing is left behind, even after a crash);
// its blocks are reserved with fallocate(2), so a full disk (or a file size limit) is an
// InputError at the allocation, not a SIGBUS at a later write (on a file system that cannot
// reserve blocks the file is sparse, and a full disk is a SIGBUS). The kernel writes such pages back to the file and
// drops them under memory pressure, where anonymous memory without swap would be killed. An
// array allocated in a scope may be freed after it, on any thread. Smaller allocations, and
// all allocations outside a scope, come from the heap; a thread that works for the scope's thread
// enters its scope with MappedStorage::Enter.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace postbox::sim {

inline constexpr std::size_t kMappedMin = std::size_t{1} << 20;

// Throws InputError (naming the directory) when dir is not a directory this process can create
// files in. Scopes nest; the innermost one's directory is used.
class MappedStorage {
 public:
  explicit MappedStorage(std::string dir);
  ~MappedStorage();
  MappedStorage(const MappedStorage&) = delete;
  MappedStorage& operator=(const MappedStorage&) = delete;

  // The bytes now mapped from files by Array allocations (all threads), and the most mapped at
  // once since the outermost scope on this thread was made.
  [[nodiscard]] static std::size_t mapped_bytes() noexcept;
  [[nodiscard]] std::size_t peak_bytes() const noexcept;
  // Whether a scope lives on this thread.
  [[nodiscard]] static bool active() noexcept;
  // Whether p is the start of a file-backed allocation now live (tests).
  [[nodiscard]] static bool is_mapped(const void* p) noexcept;

  // The directory of the scope on this thread (null: none), and a guard that makes it this
  // thread's while it lives: for work another thread does on behalf of the scope's thread (a
  // oneTBB stage building the schedule), so that its arrays are file-backed too.
  [[nodiscard]] static const std::string* current() noexcept;
  class Enter {
   public:
    explicit Enter(const std::string* dir) noexcept;
    ~Enter();
    Enter(const Enter&) = delete;
    Enter& operator=(const Enter&) = delete;

   private:
    const std::string* outer_;
  };

 private:
  std::string dir_;
  const std::string* outer_;
};

namespace detail {
void* map_allocate(std::size_t bytes);           // file-backed in a scope, else the heap
void map_deallocate(void* p, std::size_t bytes) noexcept;
}  // namespace detail

// A stateless allocator: every instance can free what any other allocated.
template <class T>
struct MapAlloc {
  using value_type = T;
  MapAlloc() noexcept = default;
  template <class U>
  MapAlloc(const MapAlloc<U>& /*unused*/) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) { return static_cast<T*>(detail::map_allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { detail::map_deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const MapAlloc<U>& /*unused*/) const noexcept {
    return true;
  }
};

template <class T>
using Array = std::vector<T, MapAlloc<T>>;

}  // namespace postbox::sim
