// Collectives across P MPI processes × T threads, called by the threads themselves: allreduce,
// bcast, reduce and gather (docs/cluster.md, "Collectives called by the threads").
//
// Ranks: rank = process·T + thread (process-major, as cluster::Job). Every thread t (0..T−1) of
// every process calls the same operation with its own buffer; the threads of a process share
// memory, so inside a process nothing travels as a message: the threads read each other's
// buffers. Between processes one thread per process (the process's leader: the root's thread in
// the root's process, else thread 0) sends MPI messages, except in allreduce's split node level
// (below). When a call returns at a thread, its buffers hold the result:
//  * allreduce(t, buffer, op): every buffer holds x_0 ⊕ x_1 ⊕ … ⊕ x_{P·T−1}, the fold in rank
//    order; ⊕ must be associative, it need not be commutative. In place.
//  * bcast(t, buffer, root): every buffer holds the root's.
//  * reduce(t, buffer, root, op): the root's buffer holds the fold in rank order (as allreduce);
//    the other buffers are left with partial results (a leader's holds its process's fold).
//  * gather(t, block, out, root): the root's `out` (P·T·block bytes; ignored elsewhere) holds
//    every rank's block, rank r's at offset r·block bytes; the blocks are only read.
//  * barrier(t): returns once every thread of every process has called it (a plain barrier:
//    cluster::ClusterBarrier has split phases, drops, reductions and a completion function).
//
// Allreduce's algorithms, by the buffer's size (algorithm(bytes)):
//  * below CollectivesOptions::rabenseifner_min_bytes, recursive doubling on one thread per
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
// barrier between processes: dissemination with empty messages (⌈log2 P⌉ rounds, each one
// message latency; at P = 2 one exchange). bcast, reduce and gather between processes: binomial trees over the leaders (bcast and gather
// relative to the root's process; reduce to process 0 in process order, so the fold stays in
// rank order, then to the root's process when that is another one). In a gather a process
// without children in the tree sends its T blocks straight from the threads' buffers, one
// message each; one with children sends its blocks and what it gathered as one message.
// Messages between processes of a few KiB are cut into fragments that each fit the MPI
// library's eager protocol (CollectivesOptions::fragment_bytes).
// Inside a process the threads meet twice per call (a barrier once every buffer is there, one
// before anyone leaves); with T = 1 there is no barrier. bcast, reduce and gather of at most
// CollectivesOptions::staged_up_to bytes with T > 1 (small calls) do not meet: their data passes
// through the object's ring of kRingDepth slots (the process's n-th small call uses slot
// n mod kRingDepth), and a thread waits only for what it needs:
//  * bcast: the leader takes its messages, copies its buffer into the slot and returns; the
//    other threads wait for the slot to be filled and copy it out;
//  * reduce and gather: every thread copies its buffer or block into its part of the slot;
//    the others return, the leader waits for every part, folds them in thread order (reduce)
//    or sends them on (gather).
// So a thread that nobody waits for (bcast's leader, reduce's and gather's other threads) runs
// up to kRingDepth small calls ahead of the others of its process; its next small call waits
// until every thread of the process has finished the small call kRingDepth before it. A
// thread's own buffer is read and written by that thread alone in a small call, so it is free
// when the call returns, as in every call. The leaders of a process take their messages in call
// order, although consecutive calls may have different leaders (different roots).
//
// Requirements: the constructor, every operation and the destructor are collective over the
// communicator (every process constructs with the same T; every thread of every process makes
// the same calls in the same order, with the same byte count, root and operator, as MPI
// requires); an operation is called by T distinct threads of the process at once, each with its
// own thread index; MPI initialised with MPI_THREAD_MULTIPLE (MpiEnvironment), since several
// threads may call MPI. A byte count or root that differs between processes is an MPI error
// (MPI's default handler ends the job) or a hang, as in MPI. In a small call the threads of a
// process must also agree on what the refusals below cannot see: a size on the same side of
// staged_up_to, whether their own arguments are refused, and, in bcast, the leader (roots
// that make no thread or two threads the leader): else a hang or garbled messages.
//
// Errors: threads < 1 or differing across processes → InputError on every process. In an
// operation other than a small call, checked once every thread of the process has arrived, by
// every thread: a byte count that differs from thread 0's in the same process, a root outside
// 0..P·T−1 or differing from thread 0's, allreduce and reduce: a count that is not a whole
// number of op.elem_bytes elements or no op.fn → InputError, thrown by every thread of that
// process, before any message. gather: the root's `out` smaller than P·T·block bytes →
// InputError in every thread of the root's process alone (the others cannot see it and send
// their blocks, which nobody receives: do not use the object again, as after an MPI error).
// In a small call every thread checks its own root (outside the job) and reduce's operator
// (none, or a count that is not a whole number of elements) before anything else, and refuses
// alone; a thread checks the others' size and root only where it waits for them: reduce's and
// gather's leader checks every thread's part against its own and refuses (before any message),
// bcast's other threads check the leader's and refuse (after the leader's messages); the threads
// that wait for nobody have returned and do not refuse. gather: the root's `out` too small is
// refused by the root's thread alone (and the object is not used again, as above). After any
// other refusal the object works on.
//
// Memory ordering: what a thread wrote to its buffer before the call is read by the other
// threads and processes after they meet inside it (in a small call, after its thread copied it
// into the ring); what the call wrote to a buffer is visible to its thread when the call returns
// (the inner barrier's ordering, barrier.hpp; in a small call, release and acquire on the
// slot).
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

// The default size from which allreduce takes Rabenseifner's algorithm: the crossover measured
// on 2 processes × 1 thread (docs/cluster.md, "Collectives called by the threads").
inline constexpr std::size_t kRabenseifnerMinBytes = 8192;

// Who runs Rabenseifner's algorithm between processes (above): every thread on its slice
// (split), thread 0 on the whole vector (leader), or split unless the node is oversubscribed.
enum class AllreduceNodeLevel { automatic, split, leader };

// The ring's slots: how many small calls (at most CollectivesOptions::staged_up_to bytes) a
// thread may run ahead of another thread of its process (above). The ring holds
// kRingDepth · T · staged_up_to bytes (256 KiB at T = 2 with the default 2 KiB).
inline constexpr std::size_t kRingDepth = 64;

struct CollectivesOptions {
  // Buffers of at least this many bytes run Rabenseifner's algorithm, smaller ones recursive
  // doubling (0: always Rabenseifner's).
  std::size_t rabenseifner_min_bytes = kRabenseifnerMinBytes;
  // A message between processes of more than fragment_bytes and at most fragment_up_to bytes is
  // sent as fragments of fragment_bytes (the last one shorter), so that each fits the MPI
  // library's eager protocol where the whole message would wait for the rendezvous handshake
  // (Open MPI's shared-memory transport: 4096 bytes with its header; measured in docs/cluster.md).
  // fragment_bytes 0: never.
  std::size_t fragment_bytes = 4000;
  std::size_t fragment_up_to = 8192;
  AllreduceNodeLevel node_level = AllreduceNodeLevel::automatic;
  // bcast, reduce and gather of at most this many bytes (per rank) with T > 1: the data passes
  // between the threads of a process through the object's ring, and the threads do not meet
  // (above).
  std::size_t staged_up_to = 2048;
};

class Collectives {
 public:
  // Collective over comm (duplicated: the messages never match the application's).
  Collectives(MPI_Comm comm, int threads, CollectivesOptions options = {});
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  // Thread `thread` of this process (above).
  void allreduce(int thread, std::span<std::byte> buffer, const ReduceFn& op);
  void bcast(int thread, std::span<std::byte> buffer, int root);
  void reduce(int thread, std::span<std::byte> buffer, int root, const ReduceFn& op);
  void gather(int thread, std::span<const std::byte> block, std::span<std::byte> out, int root);
  void barrier(int thread);

  // The algorithm allreduce takes for a buffer of `bytes`.
  [[nodiscard]] AllreduceAlgorithm algorithm(std::size_t bytes) const noexcept;
  // Whether allreduce's Rabenseifner's algorithm runs on every thread's slice (true) or on
  // thread 0 (false; always with T = 1).
  [[nodiscard]] bool splits() const noexcept;
  [[nodiscard]] int processes() const noexcept;
  [[nodiscard]] int process() const noexcept;
  [[nodiscard]] int threads() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace postbox::cluster
