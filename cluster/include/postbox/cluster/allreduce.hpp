// Allreduce across P MPI processes × T threads, called by the threads themselves (docs/cluster.md,
// "Allreduce by size").
//
// Every thread t (0..T−1) of every process calls run(t, buffer, op) with its own buffer; when
// run() returns, every buffer of the job holds the fold of all P·T inputs in global rank order
// (rank = process·T + thread): x_0 ⊕ x_1 ⊕ … ⊕ x_{P·T−1}. ⊕ must be associative; it need not be
// commutative (ReduceFn::commutative is not consulted). The call is in place.
//
// Algorithms, by the buffer's size (algorithm(bytes)):
//  * below AllreduceOptions::rabenseifner_min_bytes, recursive doubling on one thread per
//    process: thread 0 folds its process's T buffers in thread order, exchanges the whole
//    vector with the other processes' thread 0 in ⌈log2 P⌉ rounds (a non-power-of-two P first
//    folds pairs of processes, as Rabenseifner's algorithm does), and writes the result into
//    every buffer of its process: few messages, each one latency;
//  * from that size up, Rabenseifner's algorithm: reduce-scatter by recursive halving, then
//    allgather by recursive doubling, between processes. Every byte of the vector crosses
//    between processes about twice in all (where recursive doubling sends the whole vector
//    log2 P times), and each process reduces 1/P of it. The node level (splits()): where the
//    threads of the node's processes fit its CPUs, the vector is split across the threads:
//    thread t owns the t-th of T slices, folds that slice over its process's T buffers, runs
//    Rabenseifner's algorithm over it with thread t of every other process, and writes the
//    slice's result into every buffer of its process, so the T threads share the arithmetic,
//    the copies and the messages; on an oversubscribed node (more threads than CPUs) thread 0
//    does it all for the whole vector, as in the small path, because T threads that take turns
//    on too few cores only add hand-offs (measured in docs/cluster.md).
// Messages between processes of a few KiB are cut into fragments that each fit the MPI
// library's eager protocol (AllreduceOptions::fragment_bytes).
// Inside a process the threads meet twice per call (a barrier after every buffer is there and
// one before anyone leaves); nothing is copied between threads other than the results.
//
// Requirements: the constructor, run() and the destructor are collective over the communicator
// (every process constructs with the same T; every thread of every process calls run() the same
// number of times, with the same byte count and the same operator); run() is called by T
// distinct threads of the process at once, each with its own thread index, one call at a time per
// index; MPI initialised with MPI_THREAD_MULTIPLE (MpiEnvironment), since every thread may call
// MPI. A byte count that differs between processes is an MPI error (MPI's default handler ends
// the job).
//
// Errors: threads < 1 or differing across processes → InputError on every process. In run():
// a byte count that is not a whole number of op.elem_bytes elements, or that differs from thread
// 0's in the same process, or a null op.fn → InputError, thrown by every thread of that process.
//
// Memory ordering: what a thread wrote to its buffer before run() is read by the other threads
// and processes after they meet inside run(); what run() wrote to a buffer is visible to its
// thread when run() returns (the inner barrier's ordering, barrier.hpp).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "postbox/runtime/executor.hpp"  // ReduceFn

namespace postbox::cluster {

enum class AllreduceAlgorithm { recursive_doubling, rabenseifner };

// "recursive-doubling", "rabenseifner".
const char* to_string(AllreduceAlgorithm algorithm) noexcept;

// The default size from which run() takes Rabenseifner's algorithm: the crossover measured on
// 2 processes × 1 and × 2 threads (docs/cluster.md, "Allreduce by size").
inline constexpr std::size_t kRabenseifnerMinBytes = 8192;

// Who runs Rabenseifner's algorithm between processes (above): every thread on its slice
// (split), thread 0 on the whole vector (leader), or split unless the node is oversubscribed.
enum class AllreduceNodeLevel { automatic, split, leader };

struct AllreduceOptions {
  // Buffers of at least this many bytes run Rabenseifner's algorithm, smaller ones recursive
  // doubling (0: always Rabenseifner's).
  std::size_t rabenseifner_min_bytes = kRabenseifnerMinBytes;
  // A message between processes of more than fragment_bytes and at most fragment_up_to bytes is
  // sent as fragments of fragment_bytes (the last one shorter), so that each fits the MPI
  // library's eager protocol where the whole message would wait for the rendezvous handshake
  // (Open MPI's shared-memory transport: 4096 bytes with its header; measured in docs/cluster.md).
  // fragment_bytes 0: never.
  std::size_t fragment_bytes = 4000;
  std::size_t fragment_up_to = 32768;
  AllreduceNodeLevel node_level = AllreduceNodeLevel::automatic;
};

class Allreduce {
 public:
  // Collective over comm (duplicated: the messages never match the application's).
  Allreduce(MPI_Comm comm, int threads, AllreduceOptions options = {});
  ~Allreduce();
  Allreduce(const Allreduce&) = delete;
  Allreduce& operator=(const Allreduce&) = delete;

  // Thread `thread` of this process: buffer in, the job's fold out (above).
  void run(int thread, std::span<std::byte> buffer, const ReduceFn& op);

  // The algorithm run() takes for a buffer of `bytes`.
  [[nodiscard]] AllreduceAlgorithm algorithm(std::size_t bytes) const noexcept;
  [[nodiscard]] int processes() const noexcept;
  [[nodiscard]] int process() const noexcept;
  [[nodiscard]] int threads() const noexcept;
  // Whether Rabenseifner's algorithm runs on every thread's slice (true) or on thread 0 (false;
  // always with T = 1).
  [[nodiscard]] bool splits() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace postbox::cluster
