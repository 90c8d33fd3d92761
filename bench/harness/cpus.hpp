// The CPUs a benchmark pins its threads to (bench/ only): the first two the process may use, and
// pinning the calling thread to one of them.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <array>
#include <cstddef>

namespace postbox::bench {

// The first two CPUs in the calling thread's affinity mask, -1 where it has fewer. Call it
// before pinning the calling thread (afterwards its mask is the one CPU).
inline std::array<int, 2> first_two_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::array<int, 2> out{-1, -1};
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  int k = 0;
  for (int c = 0; c < CPU_SETSIZE && k < 2; ++c) {
    if (CPU_ISSET(c, &set)) out[static_cast<std::size_t>(k++)] = c;
  }
  return out;
}

// Pins the calling thread to `cpu`; false when the OS refuses.
inline bool pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace postbox::bench
