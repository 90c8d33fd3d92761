#include "fiber.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "postbox/runtime/check.hpp"

#if defined(POSTBOX_TSAN)
extern "C" {
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif

namespace postbox::internal {

namespace ctx = boost::context;

namespace {

// ThreadSanitizer's fiber annotations: every switch names the context it enters, so TSan keeps
// one shadow stack and one clock per rank (flags 0: a switch synchronizes, as it does).
void* tsan_current() noexcept {
#if defined(POSTBOX_TSAN)
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}
void* tsan_create() noexcept {
#if defined(POSTBOX_TSAN)
  return __tsan_create_fiber(0);
#else
  return nullptr;
#endif
}
void tsan_switch([[maybe_unused]] void* to) noexcept {
#if defined(POSTBOX_TSAN)
  __tsan_switch_to_fiber(to, 0);
#endif
}
void tsan_destroy([[maybe_unused]] void* f) noexcept {
#if defined(POSTBOX_TSAN)
  if (f != nullptr) __tsan_destroy_fiber(f);
#endif
}

// The futex on the epoch word (std::atomic::wait would yield four times first; see engine.cpp).
void epoch_wait(std::uint32_t seen) noexcept {
#if defined(__linux__)
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&blocked_epoch), FUTEX_WAIT_PRIVATE, seen, nullptr,
                  nullptr, 0);
#else
  blocked_epoch.wait(seen, std::memory_order_seq_cst);
#endif
}

thread_local FiberWorker* t_running = nullptr;  // set while one of its fibers runs

std::mutex& registry_mu() {
  static std::mutex mu;
  return mu;
}
std::vector<const FiberWorker*>& registry() {
  static std::vector<const FiberWorker*> workers;
  return workers;
}

}  // namespace

struct FiberWorker::Slot {
  int rank = 0;
  ctx::fiber fiber;
  // The scheduler's continuation while this fiber runs.
  ctx::fiber scheduler;
  const FiberWait* wait = nullptr;  // non-null while suspended in a wait
  bool announced = false;           // before_block ran during this wait
  bool done = false;
  // relaxed mirrors for waiting_ranks(), read from other threads: suspended in a wait; inside
  // a run (set_in_run).
  std::atomic<bool> waiting{false};
  std::atomic<bool> in_run{false};
  void* tsan = nullptr;
};

FiberWorker* current_fiber_worker() noexcept { return t_running; }

int fiber_wait(FiberWorker& worker, const FiberWait& wait) { return worker.wait(wait); }

void fiber_yield() {
  if (FiberWorker* w = t_running) w->yield();
}

void wake_blocked_workers() noexcept {
  // seq_cst: a worker that loaded the old epoch sleeps on it and so is woken by the change.
  blocked_epoch.fetch_add(1, std::memory_order_seq_cst);
#if defined(__linux__)
  (void)::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&blocked_epoch), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
                  nullptr, 0);
#else
  blocked_epoch.notify_all();
#endif
}

FiberWorker::FiberWorker(std::size_t stack_bytes) : stack_bytes_(stack_bytes) {
  std::lock_guard<std::mutex> lock(registry_mu());
  registry().push_back(this);
}

FiberWorker::~FiberWorker() {
  {
    std::lock_guard<std::mutex> lock(registry_mu());
    std::erase(registry(), this);
  }
  // Fibers are destroyed only after they returned (run() ends then); one never started is
  // simply dropped, its body never having run.
  for (auto& s : slots_) tsan_destroy(s->tsan);
}

void FiberWorker::add(int rank, std::function<void()> body) {
  auto slot = std::make_unique<Slot>();
  Slot* s = slot.get();
  s->rank = rank;
  s->fiber = ctx::fiber(std::allocator_arg, ctx::protected_fixedsize_stack(stack_bytes_),
                        [this, s, body = std::move(body)](ctx::fiber&& scheduler) mutable {
                          s->scheduler = std::move(scheduler);
                          try {
                            body();
                          } catch (const ctx::detail::forced_unwind&) {
                            throw;  // Boost.Context unwinding a fiber destroyed while suspended
                          } catch (...) {
                            std::terminate();  // body catches its own exceptions (Team does)
                          }
                          s->done = true;
                          tsan_switch(tsan_main_);
                          return std::move(s->scheduler);
                        });
  s->tsan = tsan_create();
  slots_.push_back(std::move(slot));
  ++live_;
}

void FiberWorker::resume(Slot& s) {
  current_ = &s;
  t_running = this;
  tsan_switch(s.tsan);
  s.fiber = std::move(s.fiber).resume();
  t_running = nullptr;
  current_ = nullptr;
  if (s.done) --live_;
}

int FiberWorker::wait(const FiberWait& w) {
  Slot& s = *current_;
  s.wait = &w;
  s.announced = false;
  // relaxed: diagnostics only.
  s.waiting.store(true, std::memory_order_relaxed);
  tsan_switch(tsan_main_);
  s.scheduler = std::move(s.scheduler).resume();
  // Resumed by the scheduler: w.pred() held when it looked.
  s.waiting.store(false, std::memory_order_relaxed);
  s.wait = nullptr;
  return s.announced ? 2 : 1;
}

void FiberWorker::yield() {
  Slot& s = *current_;
  tsan_switch(tsan_main_);
  s.scheduler = std::move(s.scheduler).resume();
}

// One pass over the fibers from `next`: resumes every one that can run. True when one ran.
bool FiberWorker::poll(std::size_t& next) {
  const std::size_t n = slots_.size();
  bool ran = false;
  for (std::size_t k = 0; k < n; ++k) {
    Slot& s = *slots_[next];
    next = next + 1 == n ? 0 : next + 1;
    if (s.done) continue;
    if (s.wait != nullptr && !s.wait->pred(s.wait->pred_obj)) continue;
    resume(s);
    ran = true;
  }
  return ran;
}

void FiberWorker::run(const WaitPolicy& idle) {
  PB_CHECK(t_running == nullptr, "FiberWorker::run on a fiber");
  tsan_main_ = tsan_current();
  std::size_t next = 0;
  while (live_ > 0) {
    if (!poll(next)) idle_wait(idle, next);
  }
}

// Every live fiber waits and none can go on: spin, yield, then block (wait.hpp's policy).
void FiberWorker::idle_wait(const WaitPolicy& idle, std::size_t& next) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 16; ++i) {
    cpu_relax();
    if (poll(next)) return;
  }
  const auto spin_end = clock::now() + std::chrono::nanoseconds(idle.spin_ns);
  while (clock::now() < spin_end) {
    cpu_relax();
    if (poll(next)) return;
  }
  const auto yield_end = spin_end + std::chrono::nanoseconds(idle.yield_ns);
  while (clock::now() < yield_end) {
    std::this_thread::yield();
    if (poll(next)) return;
  }
  block();
}

bool FiberWorker::any_ready() const {
  for (const auto& s : slots_) {
    if (!s->done && (s->wait == nullptr || s->wait->pred(s->wait->pred_obj))) return true;
  }
  return false;
}

void FiberWorker::block() {
  // Announce every wait first (mailboxes raise their sleeping flags): from here on a waker that
  // publishes sees the flag and calls wake(), which sees this worker counted below.
  for (auto& s : slots_) {
    if (s->wait != nullptr && !s->announced) {
      s->announced = true;
      s->wait->before_block(s->wait->before_block_obj);
    }
  }
  // seq_cst: Dekker with wake() (change the condition, then load blocked_workers): either the
  // waker sees this count and bumps the epoch, or the re-poll below sees the condition.
  blocked_workers.fetch_add(1, std::memory_order_seq_cst);
  for (;;) {
    sync_point();
    // seq_cst: a bump after this load changes the epoch, so the futex does not sleep on it.
    const std::uint32_t seen = blocked_epoch.load(std::memory_order_seq_cst);
    // seq_cst fence: the predicates' loads below come after the count's increment in the single
    // total order (the Dekker pair above). ThreadSanitizer does not model fences (GCC refuses
    // them under -fsanitize=thread); there a seq_cst read-modify-write of the count stands in.
#if defined(__SANITIZE_THREAD__)
    (void)blocked_workers.fetch_add(0, std::memory_order_seq_cst);
#else
    std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
    if (any_ready()) break;
    epoch_wait(seen);
  }
  // relaxed: a count; a late decrement costs a waker one needless epoch bump at most.
  blocked_workers.fetch_sub(1, std::memory_order_relaxed);
}

void FiberWorker::set_in_run(bool in_run) noexcept {
  // relaxed: diagnostics only.
  current_->in_run.store(in_run, std::memory_order_relaxed);
}

std::string FiberWorker::waiting_ranks() const {
  std::string out;
  for (const auto& s : slots_) {
    if (!s->waiting.load(std::memory_order_relaxed) || !s->in_run.load(std::memory_order_relaxed)) continue;
    out += (out.empty() ? "rank " : ", rank ") + std::to_string(s->rank);
  }
  return out;
}

std::string fiber_waiting_report() {
  std::lock_guard<std::mutex> lock(registry_mu());
  std::string out;
  int i = 0;
  for (const FiberWorker* w : registry()) {
    const std::string ranks = w->waiting_ranks();
    if (!ranks.empty()) out += "fiber worker " + std::to_string(i) + ": waiting: " + ranks + "\n";
    ++i;
  }
  return out;
}

}  // namespace postbox::internal
