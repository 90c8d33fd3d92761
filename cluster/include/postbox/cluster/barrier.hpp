// The barrier across processes: P MPI processes × T threads, global rank
// process·T + thread. Three steps per phase (Cordsen §2: reduction phase + distribution phase,
// one level per step): the library's intra-process barrier (barrier.hpp) gathers the T threads
// of each process; its completion step hands the process's arrival to the leaders' step across
// processes, carried by MPI point-to-point messages on a duplicate of the communicator; the
// intra-process wake-up then releases the threads. The leaders' step, fixed at construction:
// with a completion function, a binomial arrival tree and a Fibo wake-up tree over the
// processes (barrier_shape "fibo", built from the inter-process s and r), whose root runs the
// completion; without one, dissemination over the processes (⌈log2 P⌉ rounds of one message
// per process: one message latency per round, where the trees take two in a row). reason()
// names the one in use.
// docs/cluster.md, "The barrier across processes", describes it and the test of each sentence.
//
// Every process of the communicator constructs one ClusterBarrier (collective: it duplicates
// the communicator) with the same thread count T, and its threads call it with distinct thread
// indices 0..T-1. The API is barrier.hpp's with `thread` for `rank`:
//   arrive_and_wait(thread), arrive(thread) / wait(thread, token), arrive_and_drop(thread),
//   arrive_and_reduce(thread, value, op).
//
// Requirements: those of barrier.hpp within each process (misuse fails fast, PB_CHECK); MPI
// initialised with MPI_THREAD_MULTIPLE (MpiEnvironment). T < 1, or T differing between the
// processes → InputError on every process (the constructor compares T across processes).
//
// Guarantees (P processes × T threads; "every participant" counts every process's threads):
//  G1 A phase completes once every participant of every process has arrived; no thread leaves a
//     phase (returns from arrive_and_wait, wait or arrive_and_reduce) before then.
//  G2 arrive() and arrive_and_drop() return without waiting for any other thread, in this
//     process or another: the last thread of a process to arrive with them only starts the
//     messages; the process's progress thread or a waiting thread carries them on.
//  G3 A thread in wait() or arrive_and_wait() leaves once its phase is complete, whatever the
//     other threads of any process are doing: in particular while every thread of another
//     process arrived with arrive() and none has called wait() yet (that process's progress
//     thread answers for it).
//  G4 The completion function (ClusterBarrierOptions::completion) runs exactly once per
//     completed phase in the whole job, in the root process of the leaders' tree (the lowest
//     process that still has participants), after every participant has arrived and before
//     any leaves; never for a phase that not every participant reached. It runs on a
//     participating thread of that process, or on its progress thread when all of them are
//     between arrive() and wait().
//  G5 Any number of phases: phase numbers are 64-bit and compared wrap-safe.
//
// arrive_and_reduce: returns value_0 op value_1 op ... over the threads that call it in this
// phase, folded left in global rank order (op associative, need not be commutative), the same
// value on every caller of every process. T must be trivially copyable (it travels in MPI
// messages) and every caller in the job must use the same T and Op.
//
// Memory ordering: within a process, as barrier.hpp. Across processes: everything a thread did
// before it arrives, in memory the processes share (an MPI shared-memory window), is visible to
// every thread of every process after it leaves that phase; the leaders' MPI messages carry the
// ordering.
//
// Exceptions: if the completion function throws, the exception propagates to one thread of the
// root process (the one that ran it, or when the progress thread ran it, the first of that
// process's threads to leave the phase); the barrier is then broken in every process: every
// other participant of that phase leaves it by throwing postbox::BarrierBroken, and every later
// call throws BarrierBroken. Nobody hangs.
//
// arrive_and_drop: as barrier.hpp; participants() counts the whole job. A process whose threads
// have all dropped leaves the leaders' tree once that phase completes (the tree is rebuilt over
// the processes left, in every process). Destroying a ClusterBarrier waits until this process's
// share of a phase its threads arrived at has been sent.
//
// Abort: abort() breaks this process's barrier for good (every thread waiting in it and every
// later call throws postbox::Aborted); the other processes learn of it only through the job's
// end. A thread that throws ends the whole job: abort_job() (and run_threads(), which calls it
// for an escaping exception) prints which rank threw and calls MPI_Abort, so no process waits
// for an arrival that will never come.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "postbox/barrier/barrier.hpp"

namespace postbox::cluster {

struct ClusterBarrierOptions {
  // The intra-process barrier: make_barrier()'s names ("default", "fibo", ...), and its options
  // (intra.completion must be empty: the job-wide completion is `completion` below).
  std::string intra_algorithm = "default";
  BarrierOptions intra{};
  // Send latency s and receive latency r between processes: the leaders' wake-up tree is the
  // Fibo tree of these (Cordsen §4). nullopt: the calibration's inter-process figures
  // (inter_latency()). Process 0's value counts for every process (broadcast at construction,
  // so every process builds the same trees).
  std::optional<SendRecv> inter_send_recv{};
  // Run once per phase in the whole job (G4). Empty: none.
  std::function<void()> completion{};
};

namespace internal {

// One thread's contribution to arrive_and_reduce across processes.
struct ClusterReduce {
  const void* value = nullptr;  // const T*
  void* out = nullptr;          // std::optional<T>*
  const void* op = nullptr;     // const Op*
  std::size_t size = 0;         // sizeof(T)
  // Folds n values of T stored back to back at `values` (rank order) into `result`.
  void (*fold)(const std::byte* values, int n, const void* op, std::byte* result) = nullptr;
  // *static_cast<std::optional<T>*>(out) = the T stored at `bytes`.
  void (*store)(void* out, const std::byte* bytes) = nullptr;
};

template <class T, class Op>
void fold_bytes(const std::byte* values, int n, const void* op_ptr, std::byte* result) {
  const Op& op = *static_cast<const Op*>(op_ptr);
  T acc;
  std::memcpy(&acc, values, sizeof(T));
  for (int i = 1; i < n; ++i) {
    T v;
    std::memcpy(&v, values + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    acc = op(std::move(acc), v);
  }
  std::memcpy(result, &acc, sizeof(T));
}

template <class T>
void store_bytes(void* out, const std::byte* bytes) {
  T v;
  std::memcpy(&v, bytes, sizeof(T));
  *static_cast<std::optional<T>*>(out) = v;
}

class ClusterEngine;
struct ClusterTesting;

}  // namespace internal

class ClusterBarrier {
 public:
  // Collective over comm. threads < 1 or differing across processes → InputError.
  ClusterBarrier(MPI_Comm comm, int threads, ClusterBarrierOptions options = {});
  ~ClusterBarrier();
  ClusterBarrier(const ClusterBarrier&) = delete;
  ClusterBarrier& operator=(const ClusterBarrier&) = delete;

  void arrive_and_wait(int thread);
  BarrierToken arrive(int thread);
  void wait(int thread, BarrierToken token);
  void arrive_and_drop(int thread);
  void abort() noexcept;

  template <class T, class Op>
  T arrive_and_reduce(int thread, T value, Op op) {
    static_assert(std::is_trivially_copyable_v<T>, "arrive_and_reduce across processes: T travels in MPI messages");
    std::optional<T> out;
    internal::ClusterReduce args{&value, &out, &op, sizeof(T), &internal::fold_bytes<T, Op>, &internal::store_bytes<T>};
    reduce_impl(thread, &args);
    return std::move(*out);
  }

  // P·T, and the participants still in the barrier in the whole job (as of the last phase this
  // process completed).
  [[nodiscard]] int size() const noexcept;
  [[nodiscard]] int participants() const noexcept;
  [[nodiscard]] int threads() const noexcept;
  [[nodiscard]] int process() const noexcept;
  [[nodiscard]] int processes() const noexcept;
  // process()·threads() + thread.
  [[nodiscard]] int rank(int thread) const noexcept;
  // One line: the intra-process barrier's reason, the leaders' tree and where s and r came from.
  [[nodiscard]] const std::string& reason() const noexcept;

 private:
  friend struct internal::ClusterTesting;
  void reduce_impl(int thread, internal::ClusterReduce* args);
  std::unique_ptr<internal::ClusterEngine> engine_;
};

// The inter-process s and r the barrier takes when ClusterBarrierOptions::inter_send_recv is
// nullopt: the "inter" figures of the calibration file (postbox calibrate --mpi --save), else
// s = r = 1 µs (λ = 2). `source` (when not null) says which.
SendRecv inter_latency(std::string* source = nullptr);

// Prints "postbox: rank R (process P, thread T) failed: what; ending the job" on stderr and
// calls MPI_Abort(comm, 1): every process of the job ends, none waits for the failed rank.
[[noreturn]] void abort_job(MPI_Comm comm, int rank, int process, int thread, std::string_view what) noexcept;

// Runs fn(thread) for thread = 0..threads()-1, thread 0 on the calling thread and the others on
// new std::threads, and joins them. An exception escaping fn ends the job (abort_job naming the
// thread's global rank).
void run_threads(const ClusterBarrier& barrier, const std::function<void(int thread)>& fn);

namespace internal {
// Tests only: the phase counters of this process continue from `phase` (call between phases,
// on every process, with the same value).
struct ClusterTesting {
  static void set_phase(ClusterBarrier& barrier, std::uint64_t phase);
};
}  // namespace internal

}  // namespace postbox::cluster
