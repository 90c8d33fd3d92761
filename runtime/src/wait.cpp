#include "postbox/runtime/wait.hpp"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/parse.hpp"

namespace postbox {
namespace {

std::int64_t env_ns(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  // parse.hpp's grammar, as for every option: no sign but '-', no spaces ("+5", " 5" refused).
  try {
    return parse_int(v, name, 0);
  } catch (const InputError&) {
    throw InputError(std::string(name) + " must be a non-negative integer number of nanoseconds, got '" + v + "'");
  }
}

WaitPolicy& storage() {
  static WaitPolicy policy = WaitPolicy::from_env();
  return policy;
}

}  // namespace

WaitPolicy WaitPolicy::from_env(WaitPolicy defaults) {
  defaults.spin_ns = env_ns("POSTBOX_SPIN_NS", defaults.spin_ns);
  defaults.yield_ns = env_ns("POSTBOX_YIELD_NS", defaults.yield_ns);
  return defaults;
}

WaitPolicy WaitPolicy::from_env() { return from_env(WaitPolicy{}); }

const WaitPolicy& default_wait_policy() { return storage(); }

void set_default_wait_policy(const WaitPolicy& policy) {
  PB_CHECK(policy.spin_ns >= 0 && policy.yield_ns >= 0, "wait budgets must be non-negative");
  storage() = policy;
}

namespace internal {

#if defined(__linux__)
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "the futex needs a plain 32-bit word");
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t seen) noexcept {
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept {
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}
#else
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t seen) noexcept { word.wait(seen, std::memory_order_seq_cst); }
void futex_wake_all(std::atomic<std::uint32_t>& word) noexcept { word.notify_all(); }
#endif

}  // namespace internal

}  // namespace postbox
