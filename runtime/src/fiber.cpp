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

// What the scheduler reads on every pass comes first, on one cache line: the wait is copied in
// (not pointed to), so polling a rank reads this line and the predicate's own object only.
struct alignas(64) FiberWorker::Slot {
  bool in_wait = false;    // suspended in a wait: `wait` is valid
  bool announced = false;  // before_block ran during this wait
  bool done = false;
  bool parked = false;     // waiting in park(): on parked_, not active_
  int rank = 0;
  FiberWait wait{};
  std::size_t index = 0;  // in slots_
  ctx::fiber fiber;
  // The scheduler's continuation while this fiber runs.
  ctx::fiber scheduler;
  // relaxed mirrors for waiting_ranks(), read from other threads: suspended in a wait; inside
  // a run (set_in_run).
  std::atomic<bool> waiting{false};
  std::atomic<bool> in_run{false};
  void* tsan = nullptr;
};

namespace {
// Whether the scheduler may resume s: it yielded, or the predicate of its wait holds.
bool ready(const FiberWorker::Slot& s) { return !s.in_wait || s.wait.pred(s.wait.pred_obj); }
}  // namespace

FiberWorker* current_fiber_worker() noexcept { return t_running; }

const void* current_fiber() noexcept { return t_running != nullptr ? t_running->running() : nullptr; }

int fiber_wait(FiberWorker& worker, const FiberWait& wait) { return worker.wait(wait); }

int fiber_park(FiberWorker& worker, const FiberWait& wait) { return worker.park(wait); }

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
  s->index = slots_.size();
  // Stack colouring: every stack is its own mapping, so without an offset the frames a switch
  // touches would sit at the same page offset in every fiber and compete for the same cache
  // sets; the body starts 64 bytes lower per fiber, cycling through 4 KiB.
  const std::size_t colour = (s->index % 64) * 64;
  s->fiber = ctx::fiber(std::allocator_arg, ctx::protected_fixedsize_stack(stack_bytes_),
                        [this, s, colour, body = std::move(body)](ctx::fiber&& scheduler) mutable {
                          s->scheduler = std::move(scheduler);
                          volatile char* const pad = static_cast<char*>(__builtin_alloca(colour + 1));
                          pad[0] = 0;  // keeps the allocation
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
  active_.push_back(s);
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
  s.wait = w;
  s.in_wait = true;
  s.announced = false;
  // relaxed: diagnostics only.
  s.waiting.store(true, std::memory_order_relaxed);
  tsan_switch(tsan_main_);
  s.scheduler = std::move(s.scheduler).resume();
  // Resumed by the scheduler: w.pred() held when it looked.
  s.waiting.store(false, std::memory_order_relaxed);
  s.in_wait = false;
  return s.announced ? 2 : 1;
}

int FiberWorker::park(const FiberWait& w) {
  current_->parked = true;  // the scheduler moves it to parked_ when it switches back
  return wait(w);
}

void FiberWorker::yield() {
  Slot& s = *current_;
  tsan_switch(tsan_main_);
  s.scheduler = std::move(s.scheduler).resume();
}

// When the first parked rank may go on (the next run started), every parked rank becomes
// ready: they all wait for the same event. One whose own predicate does not hold yet is simply
// polled with the others.
void FiberWorker::unpark_if_ready() {
  if (parked_.empty()) return;
  if (!ready(*parked_.front())) return;
  // Rank order, as at the start: neighbours hand over to neighbours, and a stable order keeps
  // the stacks' walk predictable.
  std::sort(parked_.begin(), parked_.end(), [](const Slot* a, const Slot* b) { return a->index < b->index; });
  for (Slot* s : parked_) {
    s->parked = false;
    active_.push_back(s);
  }
  parked_.clear();
}

// One pass over the polled fibers: resumes every one that can run, then drops from the list
// those that finished or parked. True when one ran.
bool FiberWorker::poll() {
  unpark_if_ready();
  bool ran = false;
  std::size_t kept = 0;
  const std::size_t n = active_.size();
  for (std::size_t i = 0; i < n; ++i) {
    Slot* const s = active_[i];
    if (ready(*s)) {
      resume(*s);
      ran = true;
    }
    if (s->done) continue;
    if (s->parked) {
      parked_.push_back(s);
      continue;
    }
    active_[kept++] = s;
  }
  active_.resize(kept);
  return ran;
}

void FiberWorker::run(const WaitPolicy& idle) {
  PB_CHECK(t_running == nullptr, "FiberWorker::run on a fiber");
  tsan_main_ = tsan_current();
  while (live_ > 0) {
    if (!poll()) idle_wait(idle);
  }
}

// Every live fiber waits and none can go on: spin, yield, then block (wait.hpp's policy).
void FiberWorker::idle_wait(const WaitPolicy& idle) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 16; ++i) {
    cpu_relax();
    if (poll()) return;
  }
  const auto spin_end = clock::now() + std::chrono::nanoseconds(idle.spin_ns);
  while (clock::now() < spin_end) {
    cpu_relax();
    if (poll()) return;
  }
  const auto yield_end = spin_end + std::chrono::nanoseconds(idle.yield_ns);
  while (clock::now() < yield_end) {
    std::this_thread::yield();
    if (poll()) return;
  }
  block();
}

bool FiberWorker::any_ready() const {
  for (const Slot* s : active_) {
    if (ready(*s)) return true;
  }
  return !parked_.empty() && ready(*parked_.front());
}

void FiberWorker::block() {
  // Announce every wait first (mailboxes raise their sleeping flags): from here on a waker that
  // publishes sees the flag and calls wake(), which sees this worker counted below.
  for (auto& s : slots_) {
    if (!s->done && s->in_wait && !s->announced) {
      s->announced = true;
      s->wait.before_block(s->wait.before_block_obj);
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
