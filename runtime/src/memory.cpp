#include "postbox/runtime/internal/memory.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "postbox/runtime/check.hpp"

namespace postbox::internal {

std::uint64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
  return std::uint64_t{1} << 62;
}

void require_memory(std::uint64_t bytes, const std::string& what) {
  const std::uint64_t have = available_memory();
  if (bytes <= have) return;
  throw InputError(what + " needs about " + std::to_string(bytes >> 20) + " MiB, more than the " +
                   std::to_string(have >> 20) + " MiB of memory available");
}

}  // namespace postbox::internal
