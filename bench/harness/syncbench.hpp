// The EPCC syncbench method (Bull, "Measuring synchronisation and scheduling overheads in
// OpenMP", EWOMP 1999), header-only so that the postbox tool and the OpenMP helper executables
// (compiled against libgomp or LLVM libomp, which cannot share a process) measure the same way:
//  * reference: `inner` iterations of delay() on one thread, timed `outer` times (median kept);
//  * test: every thread runs `inner` iterations of { delay(); barrier(); }, rank 0 times the
//    loop between two barriers, `outer` times;
//  * overhead per barrier = (test − reference) / inner; mean, standard deviation and median over
//    the outer repetitions.
// `inner` is chosen by a pilot (the median of five batches of 64 iterations) so that one
// repetition lasts about target_ns.
// Method::late (a late arriver, the variant of EPCC's BARRIER_VAR idea): in iteration i only rank
// i mod p runs delay() before the barrier, so every barrier waits for one thread that arrives
// late, each thread in turn; the critical path per iteration is still one delay, so the same
// reference applies. Params::tail: rank 0 also reads the clock after every barrier and keeps a
// histogram of the per-iteration times less one delay (Shared::tail), for percentiles; it adds
// one clock read per barrier to every competitor alike.
// Standard C++ only: no postbox headers.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

namespace postbox::syncbench {

enum class Method { barrier, late };

struct Params {
  int outer = 20;                          // repetitions (statistics are over these)
  std::int64_t target_ns = 20'000'000;     // wall time of one repetition
  int delay_iters = 32;                    // EPCC's delay(): work between two barriers
  std::int64_t max_inner = 1'000'000;
  Method method = Method::barrier;
  bool tail = false;                       // keep the per-barrier histogram (Shared::tail)
};

// Per-barrier times in log-linear buckets: 16 buckets per power of two, so a percentile read
// back is within 1/16 (6%) of the time it stands for.
struct Histogram {
  static constexpr int kSub = 16;
  static constexpr int kBuckets = 64 * kSub;
  std::vector<std::uint64_t> count = std::vector<std::uint64_t>(kBuckets, 0);
  std::uint64_t total = 0;
  static int bucket(double ns) noexcept {
    if (!(ns >= 1)) return 0;
    const auto v = static_cast<std::uint64_t>(ns);
    const int log = 63 - __builtin_clzll(v);
    const int sub = log >= 4 ? static_cast<int>((v >> (log - 4)) & (kSub - 1)) : static_cast<int>(v << (4 - log)) & (kSub - 1);
    return std::min(kBuckets - 1, log * kSub + sub);
  }
  // The lower edge of a bucket, in ns.
  static double lower(int b) noexcept {
    const int log = b / kSub, sub = b % kSub;
    return static_cast<double>(std::uint64_t{1} << log) * (1.0 + sub / static_cast<double>(kSub));
  }
  void add(double ns) noexcept {
    ++count[static_cast<std::size_t>(bucket(ns))];
    ++total;
  }
  void merge(const Histogram& o) {
    for (std::size_t i = 0; i < count.size(); ++i) count[i] += o.count[i];
    total += o.total;
  }
  // The q-quantile (0 < q <= 1), as the upper edge of its bucket; 0 when empty.
  [[nodiscard]] double quantile(double q) const noexcept {
    if (total == 0) return 0;
    const auto want = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total)));
    std::uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += count[static_cast<std::size_t>(b)];
      if (seen >= want) return lower(b + 1);
    }
    return lower(kBuckets);
  }
};

struct Stats {
  double median_ns = 0;
  double mean_ns = 0;
  double sd_ns = 0;
  std::int64_t inner = 0;
  int outer = 0;
};

inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A fixed amount of work the compiler cannot remove.
inline void delay(int iters) noexcept {
  for (int i = 0; i < iters; ++i) asm volatile("" ::: "memory");
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline Stats summarize(const std::vector<double>& per_barrier_ns, std::int64_t inner) {
  Stats s;
  s.outer = static_cast<int>(per_barrier_ns.size());
  s.inner = inner;
  if (per_barrier_ns.empty()) return s;
  double sum = 0;
  for (double x : per_barrier_ns) sum += x;
  s.mean_ns = sum / static_cast<double>(per_barrier_ns.size());
  double var = 0;
  for (double x : per_barrier_ns) var += (x - s.mean_ns) * (x - s.mean_ns);
  s.sd_ns = per_barrier_ns.size() > 1 ? std::sqrt(var / static_cast<double>(per_barrier_ns.size() - 1)) : 0;
  s.median_ns = median(per_barrier_ns);
  return s;
}

// Median time of `inner` delays on this thread.
inline double reference_ns(const Params& prm, std::int64_t inner) {
  std::vector<double> t;
  for (int o = 0; o < prm.outer; ++o) {
    const auto a = now_ns();
    for (std::int64_t i = 0; i < inner; ++i) delay(prm.delay_iters);
    t.push_back(static_cast<double>(now_ns() - a));
  }
  return median(t);
}

// State shared by the threads of one measurement. Rank 0 writes; the barrier under test
// publishes (and the atomics keep a broken barrier from becoming a data race).
struct Shared {
  std::atomic<std::int64_t> inner{0};
  std::vector<double> per_barrier_ns;
  std::int64_t inner_used = 0;
  Histogram tail;  // Params::tail: per-iteration time less one delay, at rank 0
};

// Run by every thread, rank 0..p-1 of p, SPMD. barrier(rank) is the barrier under test.
template <class BarrierFn>
void body(int rank, int p, Shared& sh, const Params& prm, BarrierFn&& barrier) {
  constexpr std::int64_t kPilot = 64;
  constexpr int kPilotBatches = 5;
  const bool late = prm.method == Method::late;
  int turn = 0;  // late: the rank whose turn it is to arrive late
  auto work = [&] {
    if (!late || turn == rank) delay(prm.delay_iters);
    if (++turn == p) turn = 0;
  };
  // Pilot: estimate the cost of one iteration from the median of kPilotBatches batches, then
  // size inner to about target_ns. One batch is not enough under a competing process: a batch
  // that spans a scheduler time slice (milliseconds) made one iteration look 100x its usual cost,
  // so inner became a few dozen and every repetition's mean was one time slice spread thin.
  double batch_ns[kPilotBatches];
  for (double& b : batch_ns) {
    barrier(rank);
    const auto p0 = now_ns();
    for (std::int64_t i = 0; i < kPilot; ++i) {
      work();
      barrier(rank);
    }
    b = static_cast<double>(now_ns() - p0);
  }
  if (rank == 0) {
    std::sort(std::begin(batch_ns), std::end(batch_ns));
    const double per = std::max(1.0, batch_ns[kPilotBatches / 2] / kPilot);
    const auto inner = static_cast<std::int64_t>(static_cast<double>(prm.target_ns) / per);
    // relaxed: the barrier below orders it for the other ranks.
    sh.inner.store(std::clamp<std::int64_t>(inner, 16, prm.max_inner), std::memory_order_relaxed);
  }
  barrier(rank);
  const std::int64_t inner = sh.inner.load(std::memory_order_relaxed);
  double ref = 0;
  if (rank == 0) ref = reference_ns(prm, inner);
  const double ref_one = ref / static_cast<double>(inner);
  const bool tail = prm.tail && rank == 0;
  for (int o = 0; o < prm.outer; ++o) {
    barrier(rank);
    turn = 0;
    const auto t0 = now_ns();
    auto last = t0;
    for (std::int64_t i = 0; i < inner; ++i) {
      work();
      barrier(rank);
      if (tail) {
        const auto t = now_ns();
        sh.tail.add(static_cast<double>(t - last) - ref_one);
        last = t;
      }
    }
    if (rank == 0) sh.per_barrier_ns.push_back((static_cast<double>(now_ns() - t0) - ref) / static_cast<double>(inner));
  }
  if (rank == 0) sh.inner_used = inner;
}

}  // namespace postbox::syncbench
