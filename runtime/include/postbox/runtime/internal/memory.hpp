// Up-front memory checks: a request whose data cannot fit is refused with an InputError
// naming it, before the allocation that would fail (no bad_alloc halfway through).
#pragma once

#include <cstdint>
#include <string>

namespace postbox::internal {

// Bytes this process may still allocate: MemAvailable of /proc/meminfo, else the physical
// memory, else 2^62 (unknown).
std::uint64_t available_memory();

// InputError "<what> needs about N MiB, more than the M MiB of memory available" when `bytes`
// exceed available_memory().
void require_memory(std::uint64_t bytes, const std::string& what);

}  // namespace postbox::internal
