// What this machine can give a request, so that a request past it is refused up front with one
// InputError line instead of a bad_alloc, an out-of-memory kill or a failed thread
// creation minutes into the work. The commands check their inputs against these before they
// start, and their --help states the limits.
#pragma once

#include <cstdint>
#include <string>

#include "postbox/runtime/mailbox.hpp"
#include "postbox/runtime/plan.hpp"

namespace postbox {

// Bytes this process may still allocate: MemAvailable of /proc/meminfo (else the physical
// memory), capped by RLIMIT_AS and RLIMIT_DATA where they are set.
std::uint64_t available_memory_bytes();

// Threads this process may still start: the smallest of RLIMIT_NPROC, kernel.threads-max and
// kernel.pid_max, less the threads the system runs now (/proc/loadavg); under an address-space
// limit (RLIMIT_AS, ulimit -v) at most as many as the limit, less what the process maps now,
// holds default thread stacks (RLIMIT_STACK, plus a guard page).
std::uint64_t available_threads();

// InputError "WHAT needs about N of memory, more than the M this machine has available" when
// bytes exceed available_memory_bytes().
void require_memory(std::uint64_t bytes, const std::string& what);

// InputError "WHAT needs N threads, more than the M this system can start now (...)" when threads
// exceed available_threads(); "... more than the M whose stacks (8.0 MiB each) fit in this
// process's address-space limit (ulimit -v)" when that limit is what binds.
void require_threads(std::uint64_t threads, const std::string& what);

// The memory a Team of plan.p threads needs to run `plan` with mailbox rings of ring_bytes
// (rounded up as the mailboxes do): a ring per ordered pair that talks, within the mailboxes'
// ring_budget_bytes; the queued messages of every talking pair (its messages in the plan, each
// with its node, up to about one ring); the p·p per-pair slots and entries; every user buffer
// and scratch area; and a thread's resident stack.
std::uint64_t plan_run_memory(const Plan& plan, std::uint64_t ring_bytes,
                              std::uint64_t ring_budget_bytes = kDefaultRingBudgetBytes);

// "1.5 GiB", "12 MiB", "512 bytes".
std::string memory_text(std::uint64_t bytes);

}  // namespace postbox
