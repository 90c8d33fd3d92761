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

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/internal/sync.hpp"

// AddressSanitizer keeps its own idea of the stack each thread runs on; a switch it is not told
// about makes it report stack errors that are none (and lose its fake stacks). GCC defines
// __SANITIZE_ADDRESS__, clang answers __has_feature(address_sanitizer).
#if defined(__SANITIZE_ADDRESS__)
#define POSTBOX_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POSTBOX_ASAN_FIBERS 1
#endif
#endif
#if defined(POSTBOX_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#endif

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

// AddressSanitizer's fiber annotations: before a switch, start_switch names the stack it enters
// (and saves this context's fake stack, or passes null when the context ends for good); right
// after it, on the new stack, finish_switch restores that context's fake stack and learns the
// bounds of the stack it came from.
void asan_start_switch([[maybe_unused]] void** fake_stack, [[maybe_unused]] const void* bottom,
                       [[maybe_unused]] std::size_t size) noexcept {
#if defined(POSTBOX_ASAN_FIBERS)
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#endif
}
void asan_finish_switch([[maybe_unused]] void* fake_stack, [[maybe_unused]] const void** bottom_old,
                        [[maybe_unused]] std::size_t* size_old) noexcept {
#if defined(POSTBOX_ASAN_FIBERS)
  __sanitizer_finish_switch_fiber(fake_stack, bottom_old, size_old);
#endif
}

// The futex on the epoch word (wait.hpp's futex_wait: no spin or yield of its own).
void epoch_wait(std::uint32_t seen) noexcept { futex_wait(blocked_epoch, seen); }

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
struct alignas(internal::kCacheLine) FiberWorker::Slot {
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
  // AddressSanitizer: this fiber's stack (guard page included) and its saved fake stack.
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
  void* asan_fake = nullptr;
};

namespace {
// protected_fixedsize_stack that also records the stack's bounds in the slot (for ASan).
class RecordingStack {
 public:
  RecordingStack(std::size_t bytes, FiberWorker::Slot* slot) : inner_(bytes), slot_(slot) {}
  ctx::stack_context allocate() {
    ctx::stack_context sc = inner_.allocate();
    slot_->stack_bottom = static_cast<const char*>(sc.sp) - sc.size;
    slot_->stack_size = sc.size;
    return sc;
  }
  void deallocate(ctx::stack_context& sc) noexcept { inner_.deallocate(sc); }

 private:
  ctx::protected_fixedsize_stack inner_;
  FiberWorker::Slot* slot_;
};
}  // namespace

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
  futex_wake_all(blocked_epoch);
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
  // Stack colouring: every stack is its own mapping, so the frames a switch touches would sit at
  // the same page offsets in every fiber and compete for the same cache sets; each fiber's body
  // starts 64 bytes lower than the previous one's, cycling through 4 KiB (docs/fibers.md). Not
  // under ThreadSanitizer: with a variable-size alloca in the fiber's first frame, GCC 12's TSan
  // reports a race on the slot between the worker and the fiber it switches to.
  const std::size_t colour = (s->index % 64) * 64;
  s->fiber = ctx::fiber(std::allocator_arg, RecordingStack(stack_bytes_, s),
                        [this, s, colour, body = std::move(body)](ctx::fiber&& scheduler) mutable {
                          asan_finish_switch(nullptr, &main_stack_bottom_, &main_stack_size_);
                          s->scheduler = std::move(scheduler);
#if !defined(POSTBOX_TSAN)
                          if (colour > 0) {
                            volatile char* const pad = static_cast<char*>(__builtin_alloca(colour));
                            pad[0] = 0;  // keeps the allocation
                          }
#else
                          (void)colour;
#endif
                          try {
                            body();
                          } catch (const ctx::detail::forced_unwind&) {
                            throw;  // Boost.Context unwinding a fiber destroyed while suspended
                          } catch (...) {
                            std::terminate();  // body catches its own exceptions (Team does)
                          }
                          s->done = true;
                          asan_start_switch(nullptr, main_stack_bottom_, main_stack_size_);  // this stack ends
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
  asan_start_switch(&main_fake_stack_, s.stack_bottom, s.stack_size);
  tsan_switch(s.tsan);
  s.fiber = std::move(s.fiber).resume();
  asan_finish_switch(main_fake_stack_, nullptr, nullptr);
  t_running = nullptr;
  current_ = nullptr;
  if (s.done) --live_;
}

// Inlined into wait() and yield(): as a call of its own it added a frame to every suspended
// rank's stack and cost 9 % of a p = 1024 barrier phase.
[[gnu::always_inline]] inline void FiberWorker::switch_to_scheduler(Slot& s) {
  asan_start_switch(&s.asan_fake, main_stack_bottom_, main_stack_size_);
  tsan_switch(tsan_main_);
  s.scheduler = std::move(s.scheduler).resume();
  asan_finish_switch(s.asan_fake, &main_stack_bottom_, &main_stack_size_);
}

int FiberWorker::wait(const FiberWait& w) {
  Slot& s = *current_;
  s.wait = w;
  s.in_wait = true;
  s.announced = false;
  // relaxed: diagnostics only.
  s.waiting.store(true, std::memory_order_relaxed);
  switch_to_scheduler(s);
  // Resumed by the scheduler: w.pred() held when it looked.
  s.waiting.store(false, std::memory_order_relaxed);
  s.in_wait = false;
  return s.announced ? 2 : 1;
}

int FiberWorker::park(const FiberWait& w) {
  current_->parked = true;  // the scheduler moves it to parked_ when it switches back
  return wait(w);
}

void FiberWorker::yield() { switch_to_scheduler(*current_); }


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
