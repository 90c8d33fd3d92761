// Collectives called by the threads of P processes (cluster/collectives.hpp).
//
// Between processes both allreduce algorithms number the processes as Rabenseifner's algorithm does for a
// P that is not a power of two: with pof2 the largest power of two ≤ P and rem = P − pof2, the
// first 2·rem processes pair up (2i sends its vector to 2i+1, which folds it and takes part as
// "new rank" i), the others take part as new rank process − rem. The partner of a round is
// new rank ^ mask with mask = 1, 2, 4, ...: each round joins two neighbouring intervals of
// processes, so folding the lower one's data first keeps global rank order without
// commutativity. At the end 2i+1 sends the result back to 2i.
#include "postbox/cluster/collectives.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_poll.hpp"
#include "postbox/barrier/barrier.hpp"
#include "postbox/cluster/mpi_env.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::cluster {

const char* to_string(AllreduceAlgorithm algorithm) noexcept {
  return algorithm == AllreduceAlgorithm::rabenseifner ? "rabenseifner" : "recursive-doubling";
}

struct Collectives::State {
  MPI_Comm comm = MPI_COMM_NULL;
  int processes = 1;
  int process = 0;
  int threads = 1;
  CollectivesOptions options;
  bool oversubscribed = false;   // MPI waits yield (mpi_poll.hpp)
  bool split = false;            // Rabenseifner's algorithm on every thread's slice (else on thread 0)
  std::unique_ptr<Barrier> inner;  // the process's T threads; null when T = 1
  // Each thread's arguments, published before a call's first meeting and read after it, in
  // pub[call % 2] (calls counts every call, small ones too). Every call that publishes meets a
  // second time before anyone leaves, after the last read, so one copy would do; the two date
  // from the staged calls that met once.
  struct Published {
    std::vector<std::span<std::byte>> buffers;
    std::vector<std::span<const std::byte>> blocks;  // gather
    std::vector<const ReduceFn*> ops;
    std::vector<int> roots;
  };
  Published pub[2];
  std::vector<std::vector<std::byte>> scratch;  // per thread: what a round receives before folding it
  std::vector<std::uint64_t> calls;  // per thread: its calls so far
  // The eager ring of small rooted calls (at most options.staged_up_to bytes, T > 1): the
  // process's n-th such call (ring_calls, counted per thread) uses ring[n % depth]. Nobody waits
  // for a thread that has nothing to give it: in bcast the leader fills the slot and leaves, the
  // others copy from it; in reduce and gather every thread deposits its data and arguments and
  // only the leader waits, for the deposits. A slot is reused by call n + depth only after its
  // last reader released it (free_for), so a thread runs at most depth calls ahead.
  struct alignas(64) RingArg {
    std::atomic<std::uint64_t> seq{0};  // n + 1 once this thread's arguments of call n are here
    std::size_t bytes = 0;
    int root = 0;
  };
  struct RingSlot {
    alignas(64) std::atomic<std::uint64_t> free_for{0};  // the ring call that may use the slot next
    alignas(64) std::atomic<std::uint64_t> ready{0};      // bcast: n + 1 once the leader filled it
    std::atomic<int> readers_left{0};                     // bcast: readers still to copy call n out
    std::size_t bytes = 0;                                // bcast: the leader's size and root
    int root = 0;
    std::unique_ptr<RingArg[]> args;  // per thread
    std::vector<std::byte> data;      // per thread staged_up_to bytes (bcast: the leader's in slot 0)
  };
  static constexpr std::uint64_t kRingDepth = cluster::kRingDepth;
  std::unique_ptr<RingSlot[]> ring;
  std::vector<std::uint64_t> ring_calls;  // per thread
  [[nodiscard]] std::byte* ring_data(RingSlot& sl, int thread) const {
    return sl.data.data() + static_cast<std::size_t>(thread) * options.staged_up_to;
  }
  // The messages of ring call n, taken by its leader, go after those of call n − 1, which may
  // have had another leader (another root): MPI orders the messages of one thread, not of two.
  // mpi_turn(n) returns once call n − 1's leader has taken its messages; mpi_done(n) passes the
  // turn on (a second leader of the same call, possible only when the threads gave different
  // roots and both refuse, finds it passed already).
  alignas(64) std::atomic<std::uint64_t> mpi_seq{0};
  void mpi_turn(std::uint64_t n) const {
    ring_wait([&] { return mpi_seq.load(std::memory_order_acquire) >= n; });
  }
  void mpi_done(std::uint64_t n) {
    std::uint64_t expected = n;
    mpi_seq.compare_exchange_strong(expected, n + 1, std::memory_order_release, std::memory_order_relaxed);
  }
  template <class Pred>
  void ring_wait(Pred pred) const {
    internal::MpiPoll poll(oversubscribed);
    while (!pred()) poll.pause();
  }

  // A thread's own arguments, checked before the ring (each thread alone: the others may have left).
  void check_own_root(const char* what, int root) const {
    if (root < 0 || root >= processes * threads) {
      throw InputError(std::string(what) + ": root " + std::to_string(root) + " is outside 0.." +
                       std::to_string(processes * threads - 1));
    }
  }
  static void check_own_op(const char* what, std::size_t bytes, const ReduceFn& o) {
    if (o.fn == nullptr || o.elem_bytes == 0) throw InputError(std::string(what) + ": no operator");
    if (bytes % o.elem_bytes != 0) {
      throw InputError(std::string(what) + ": " + std::to_string(bytes) + " bytes are not a whole number of " +
                       std::to_string(o.elem_bytes) + "-byte elements");
    }
  }
  // bcast's readers: the leader's size and root against the reader's own.
  static void check_leader(const char* what, int thread, int leader, std::size_t mine, std::size_t leaders, int root,
                           int leader_root) {
    if (leader_root != root) {
      throw InputError(std::string(what) + ": thread " + std::to_string(thread) + " gave root " + std::to_string(root) +
                       ", thread " + std::to_string(leader) + " gave root " + std::to_string(leader_root));
    }
    if (mine != leaders) {
      throw InputError(std::string(what) + ": thread " + std::to_string(thread) + " gave " + std::to_string(mine) +
                       " bytes, thread " + std::to_string(leader) + " gave " + std::to_string(leaders));
    }
  }
  // reduce and gather: thread `thread` waits for slot n to be free, then deposits its data and
  // arguments in its part of it.
  void deposit(RingSlot& sl, std::uint64_t n, int thread, std::span<const std::byte> data, int root) const {
    ring_wait([&] { return sl.free_for.load(std::memory_order_acquire) == n; });
    if (!data.empty()) std::memcpy(ring_data(sl, thread), data.data(), data.size());
    RingArg& a = sl.args[static_cast<std::size_t>(thread)];
    a.bytes = data.size();
    a.root = root;
    a.seq.store(n + 1, std::memory_order_release);
  }
  // The leader of reduce and gather: waits for every thread's deposit of call n and checks that
  // they gave its size and root; on a difference it releases the slot and throws.
  void collect(RingSlot& sl, std::uint64_t n, const char* what, int thread) {
    for (int u = 0; u < threads; ++u) {
      const RingArg& a = sl.args[static_cast<std::size_t>(u)];
      ring_wait([&] { return a.seq.load(std::memory_order_acquire) == n + 1; });
    }
    const RingArg& mine = sl.args[static_cast<std::size_t>(thread)];
    for (int u = 0; u < threads; ++u) {
      const RingArg& a = sl.args[static_cast<std::size_t>(u)];
      if (a.root == mine.root && a.bytes == mine.bytes) continue;
      // Read before the slot is released: the next use may overwrite it.
      const std::size_t bytes = mine.bytes, theirs = a.bytes;
      const int root = mine.root, their_root = a.root;
      sl.free_for.store(n + kRingDepth, std::memory_order_release);
      mpi_turn(n);
      mpi_done(n);
      if (their_root != root) {
        throw InputError(std::string(what) + ": thread " + std::to_string(u) + " gave root " + std::to_string(their_root) +
                         ", thread " + std::to_string(thread) + " gave root " + std::to_string(root));
      }
      throw InputError(std::string(what) + ": thread " + std::to_string(u) + " gave " + std::to_string(theirs) +
                       " bytes, thread " + std::to_string(thread) + " gave " + std::to_string(bytes));
    }
  }

  // pof2, rem and this process's new rank (-1: it hands its vector to the next process).
  int pof2 = 1;
  int rem = 0;
  int new_rank = 0;
  [[nodiscard]] int real_rank(int nr) const { return nr < rem ? 2 * nr + 1 : nr + rem; }

  void wait_all(int n, MPI_Request* requests) const {
    internal::MpiPoll poll(oversubscribed);
    for (;;) {
      int done = 0;
      MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE);
      if (done != 0) return;
      poll.pause();
    }
  }
  // A message of more than fragment_bytes and at most fragment_up_to bytes goes as fragments of
  // fragment_bytes (CollectivesOptions): the sender splits by its length, the receiver by the same
  // length, and MPI's non-overtaking rule matches them in order.
  [[nodiscard]] bool fragmented(std::size_t bytes) const {
    return options.fragment_bytes > 0 && bytes > options.fragment_bytes && bytes <= options.fragment_up_to;
  }
  static void post(std::vector<MPI_Request>& r, bool receive, const std::byte* data, std::size_t bytes, std::size_t piece,
                   int peer, int tag, MPI_Comm comm) {
    for (std::size_t at = 0; at == 0 || at < bytes; at += piece) {
      const int n = static_cast<int>(std::min(piece, bytes - at));
      r.push_back(MPI_REQUEST_NULL);
      if (receive) MPI_Irecv(const_cast<std::byte*>(data) + at, n, MPI_BYTE, peer, tag, comm, &r.back());
      else MPI_Isend(data + at, n, MPI_BYTE, peer, tag, comm, &r.back());
      if (piece >= bytes) break;
    }
  }
  // Either side may be empty (bytes 0 and no pointer): a send, a receive, or both. Receives are
  // posted first, so neither side's send waits on an unposted receive.
  void exchange(const std::byte* out, std::size_t out_bytes, std::byte* in, std::size_t in_bytes, int peer, int tag,
                bool send_it = true, bool receive_it = true) const {
    thread_local std::vector<MPI_Request> r;
    r.clear();
    if (receive_it) post(r, true, in, in_bytes, fragmented(in_bytes) ? options.fragment_bytes : in_bytes, peer, tag, comm);
    if (send_it) post(r, false, out, out_bytes, fragmented(out_bytes) ? options.fragment_bytes : out_bytes, peer, tag, comm);
    wait_all(static_cast<int>(r.size()), r.data());
  }
  void send(const std::byte* data, std::size_t bytes, int to, int tag) const {
    exchange(data, bytes, nullptr, 0, to, tag, true, false);
  }
  void recv(std::byte* data, std::size_t bytes, int from, int tag) const {
    exchange(nullptr, 0, data, bytes, from, tag, false, true);
  }

  // The non-power-of-two prologue: false when this process sits out the rounds.
  bool fold_pairs_in(std::byte* v, std::size_t bytes, std::size_t count, const ReduceFn& op, std::byte* tmp,
                     int tag) const {
    if (process >= 2 * rem) return true;
    if (process % 2 == 0) {
      send(v, bytes, process + 1, tag);
      return false;
    }
    recv(tmp, bytes, process - 1, tag);
    op.fn(tmp, v, v, count, op.state);  // the lower process first
    return true;
  }
  void hand_back(std::byte* v, std::size_t bytes, int tag) const {
    if (process >= 2 * rem) return;
    if (process % 2 == 0) recv(v, bytes, process + 1, tag);
    else send(v, bytes, process - 1, tag);
  }

  // Recursive doubling over the whole vector.
  void recursive_doubling(std::byte* v, std::size_t count, const ReduceFn& op, std::byte* tmp, int tag) const {
    const std::size_t bytes = count * op.elem_bytes;
    if (processes == 1 || bytes == 0) return;
    if (fold_pairs_in(v, bytes, count, op, tmp, tag)) {
      for (int mask = 1; mask < pof2; mask <<= 1) {
        const int partner = new_rank ^ mask;
        exchange(v, bytes, tmp, bytes, real_rank(partner), tag);
        if (new_rank < partner) op.fn(v, tmp, v, count, op.state);
        else op.fn(tmp, v, v, count, op.state);
      }
    }
    hand_back(v, bytes, tag);
  }

  // Rabenseifner: reduce-scatter by recursive halving of the vector (rounds mask = 1, 2, ...),
  // then allgather by recursive doubling in the reverse order. The vector is cut into pof2
  // blocks (block i: elements [disp(i), disp(i+1))); each round halves the range of blocks a
  // process is responsible for, the lower new rank keeping the lower half.
  void rabenseifner(std::byte* v, std::size_t count, const ReduceFn& op, std::byte* tmp, int tag) const {
    const std::size_t eb = op.elem_bytes;
    const std::size_t bytes = count * eb;
    if (processes == 1 || bytes == 0) return;
    if (fold_pairs_in(v, bytes, count, op, tmp, tag)) {
      const auto q = count / static_cast<std::size_t>(pof2), r = count % static_cast<std::size_t>(pof2);
      const auto disp = [&](int i) {
        const auto k = static_cast<std::size_t>(i);
        return (k * q + std::min(k, r)) * eb;
      };
      int lo = 0, hi = pof2;
      int saved[32][2];  // the range before each round, for the allgather
      int rounds = 0;
      for (int mask = 1; mask < pof2; mask <<= 1) {
        const int partner = new_rank ^ mask;
        const int mid = lo + (hi - lo) / 2;
        const bool lower = new_rank < partner;
        const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
        const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
        std::byte* keep = v + disp(keep_lo);
        const std::size_t keep_bytes = disp(keep_hi) - disp(keep_lo);
        exchange(v + disp(give_lo), disp(give_hi) - disp(give_lo), tmp, keep_bytes, real_rank(partner), tag);
        if (lower) op.fn(keep, tmp, keep, keep_bytes / eb, op.state);
        else op.fn(tmp, keep, keep, keep_bytes / eb, op.state);
        saved[rounds][0] = lo;
        saved[rounds][1] = hi;
        ++rounds;
        lo = keep_lo;
        hi = keep_hi;
      }
      for (int mask = pof2 >> 1; mask > 0; mask >>= 1) {
        --rounds;
        const int partner = new_rank ^ mask;
        const int plo = saved[rounds][0], phi = saved[rounds][1];
        // The partner holds the other half of [plo, phi).
        const int other_lo = lo == plo ? hi : plo, other_hi = lo == plo ? phi : lo;
        exchange(v + disp(lo), disp(hi) - disp(lo), v + disp(other_lo), disp(other_hi) - disp(other_lo),
                 real_rank(partner), tag);
        lo = plo;
        hi = phi;
      }
    }
    hand_back(v, bytes, tag);
  }
  // The rooted operations' messages between leaders, on a tag of their own (allreduce's are
  // 0..T-1).
  [[nodiscard]] int rooted_tag() const { return threads; }
  void arrive(int thread) const {
    if (inner) inner->arrive_and_wait(thread);
  }
  // The checks every thread makes once all have arrived (the same data: all throw or none).
  void check_same_size(const char* what, std::size_t bytes, const Published& m,
                       std::size_t (*size_of)(const Published&, int)) const {
    for (int u = 1; u < threads; ++u) {
      if (size_of(m, u) != bytes) {
        throw InputError(std::string(what) + ": thread " + std::to_string(u) + " gave " + std::to_string(size_of(m, u)) +
                         " bytes, thread 0 gave " + std::to_string(bytes));
      }
    }
    if (bytes > static_cast<std::size_t>(INT_MAX))
      throw InputError(std::string(what) + ": " + std::to_string(bytes) + " bytes; MPI counts stop at " + std::to_string(INT_MAX));
  }
  void check_root(const char* what, const Published& m) const {
    const int root = m.roots[0];
    for (int u = 1; u < threads; ++u) {
      if (m.roots[static_cast<std::size_t>(u)] != root) {
        throw InputError(std::string(what) + ": thread " + std::to_string(u) + " gave root " +
                         std::to_string(m.roots[static_cast<std::size_t>(u)]) + ", thread 0 gave root " + std::to_string(root));
      }
    }
    if (root < 0 || root >= processes * threads) {
      throw InputError(std::string(what) + ": root " + std::to_string(root) + " is outside 0.." +
                       std::to_string(processes * threads - 1));
    }
  }
  void check_op(const char* what, std::size_t bytes, const Published& m) const {
    for (int u = 0; u < threads; ++u) {
      const ReduceFn& o = *m.ops[static_cast<std::size_t>(u)];
      if (o.fn == nullptr || o.elem_bytes == 0)
        throw InputError(std::string(what) + ": thread " + std::to_string(u) + " gave no operator");
      if (bytes % o.elem_bytes != 0) {
        throw InputError(std::string(what) + ": " + std::to_string(bytes) + " bytes are not a whole number of " +
                         std::to_string(o.elem_bytes) + "-byte elements");
      }
    }
  }
  // Thread `leader` folds the process's T buffers in thread order into its own.
  void fold_into(int leader, std::size_t count, const ReduceFn& op, const Published& m) const {
    if (threads == 1 || count == 0) return;
    fold_around(leader, 0, count, op, m);
  }
  // Folds elements [at, at + n) (at in bytes) of the T buffers in thread order into buffer
  // `into`'s, which is one of them: first the threads after it (into ⊕ x_u, u ascending), then
  // those before (x_u ⊕ into, u descending), so that no buffer is read after it was overwritten;
  // by associativity that is x_0 ⊕ … ⊕ x_{T−1}.
  void fold_around(int into, std::size_t at, std::size_t n, const ReduceFn& op, const Published& m) const {
    std::byte* out = m.buffers[static_cast<std::size_t>(into)].data() + at;
    for (int u = into + 1; u < threads; ++u) op.fn(out, m.buffers[static_cast<std::size_t>(u)].data() + at, out, n, op.state);
    for (int u = into - 1; u >= 0; --u) op.fn(m.buffers[static_cast<std::size_t>(u)].data() + at, out, out, n, op.state);
  }

  // Binomial bcast among the processes, relative to root_process.
  void tree_bcast(std::byte* v, std::size_t bytes, int root_process) const {
    const int vr = (process - root_process + processes) % processes;
    const auto real = [&](int r) { return (r + root_process) % processes; };
    int mask = 1;
    for (; mask < processes; mask <<= 1) {
      if ((vr & mask) != 0) {
        recv(v, bytes, real(vr - mask), rooted_tag());
        break;
      }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
      if (vr + mask < processes) send(v, bytes, real(vr + mask), rooted_tag());
  }
  // Binomial reduce to process 0, the lower interval folded first.
  void tree_reduce(std::byte* v, std::size_t count, const ReduceFn& op, std::byte* tmp) const {
    const std::size_t bytes = count * op.elem_bytes;
    for (int mask = 1; mask < processes; mask <<= 1) {
      if ((process & mask) != 0) {
        send(v, bytes, process - mask, rooted_tag());
        return;
      }
      if (process + mask < processes) {
        recv(tmp, bytes, process + mask, rooted_tag());
        op.fn(v, tmp, v, count, op.state);
      }
    }
  }
  // A leader's part of a reduce across the processes: its process's fold in v (count elements)
  // goes to process 0 by the binomial tree (thread t's scratch holding what a round receives),
  // then on to root_process, whose leader ends with the whole fold in v.
  void reduce_to_root(std::size_t t, std::byte* v, std::size_t count, const ReduceFn& op, int root_process) {
    const std::size_t bytes = count * op.elem_bytes;
    if (processes == 1 || bytes == 0) return;
    auto& tmp = scratch[t];
    if (tmp.size() < bytes) tmp.resize(bytes);
    tree_reduce(v, count, op, tmp.data());
    if (root_process != 0 && process == 0) send(v, bytes, root_process, rooted_tag());
    if (root_process != 0 && process == root_process) recv(v, bytes, 0, rooted_tag());
  }
};

Collectives::Collectives(MPI_Comm comm, int threads, CollectivesOptions options) : s_(std::make_unique<State>()) {
  int given[2] = {threads, -threads};
  int agreed[2] = {0, 0};
  MPI_Allreduce(given, agreed, 2, MPI_INT, MPI_MAX, comm);  // max of T and of −T: equal iff all agree
  if (agreed[0] != -agreed[1]) throw InputError("allreduce: the processes were given different thread counts");
  if (threads < 1) throw InputError("allreduce: threads per process must be at least 1, got " + std::to_string(threads));
  State& s = *s_;
  s.threads = threads;
  s.options = options;
  MPI_Comm_dup(comm, &s.comm);
  MPI_Comm_size(s.comm, &s.processes);
  MPI_Comm_rank(s.comm, &s.process);
  const int on_node = processes_on_node(s.comm);
  const auto cpus = static_cast<unsigned>(allowed_cpu_count());
  s.oversubscribed = internal::node_oversubscribed(s.comm, threads, cpus);
  s.split = threads > 1 && (options.node_level == AllreduceNodeLevel::split ||
                            (options.node_level == AllreduceNodeLevel::automatic && !s.oversubscribed));
  while (s.pof2 * 2 <= s.processes) s.pof2 *= 2;
  s.rem = s.processes - s.pof2;
  s.new_rank = s.process < 2 * s.rem ? (s.process % 2 == 1 ? s.process / 2 : -1) : s.process - s.rem;
  if (threads > 1) {
    BarrierOptions bo;
    // The process's share of the node's CPUs: with more threads than that, the inner barrier's
    // waiters must leave the cores to the threads still to arrive (oversubscribed_wait).
    if (s.oversubscribed) bo.cpus = std::max(1u, cpus / static_cast<unsigned>(std::max(on_node, 1)));
    s.inner = std::make_unique<Barrier>(threads, std::move(bo));
  }
  for (auto& m : s.pub) {
    m.buffers.resize(static_cast<std::size_t>(threads));
    m.blocks.resize(static_cast<std::size_t>(threads));
    m.ops.resize(static_cast<std::size_t>(threads));
    m.roots.resize(static_cast<std::size_t>(threads));
  }
  s.scratch.resize(static_cast<std::size_t>(threads));
  s.calls.assign(static_cast<std::size_t>(threads), 0);
  if (threads > 1) {
    s.ring = std::make_unique<State::RingSlot[]>(State::kRingDepth);
    for (std::uint64_t i = 0; i < State::kRingDepth; ++i) {
      s.ring[i].free_for.store(i, std::memory_order_relaxed);
      s.ring[i].args = std::make_unique<State::RingArg[]>(static_cast<std::size_t>(threads));
      s.ring[i].data.resize(static_cast<std::size_t>(threads) * options.staged_up_to);
    }
  }
  s.ring_calls.assign(static_cast<std::size_t>(threads), 0);
}

Collectives::~Collectives() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (s_->comm != MPI_COMM_NULL && finalized == 0) MPI_Comm_free(&s_->comm);
}

AllreduceAlgorithm Collectives::algorithm(std::size_t bytes) const noexcept {
  return bytes >= s_->options.rabenseifner_min_bytes ? AllreduceAlgorithm::rabenseifner
                                                     : AllreduceAlgorithm::recursive_doubling;
}
int Collectives::processes() const noexcept { return s_->processes; }
int Collectives::process() const noexcept { return s_->process; }
int Collectives::threads() const noexcept { return s_->threads; }
bool Collectives::splits() const noexcept { return s_->split; }

void Collectives::allreduce(int thread, std::span<std::byte> buffer, const ReduceFn& op) {
  State& s = *s_;
  PB_CHECK(thread >= 0 && thread < s.threads,
           "Collectives::run: thread " + std::to_string(thread) + " outside 0.." + std::to_string(s.threads - 1));
  const auto t = static_cast<std::size_t>(thread);
  State::Published& m = s.pub[s.calls[t]++ % 2];
  m.buffers[t] = buffer;
  m.ops[t] = &op;
  if (s.inner) s.inner->arrive_and_wait(thread);  // every buffer is there
  // Every thread checks every thread's arguments, so they all throw or none does.
  const std::size_t bytes = m.buffers[0].size();
  for (int u = 0; u < s.threads; ++u) {
    const ReduceFn& o = *m.ops[static_cast<std::size_t>(u)];
    if (o.fn == nullptr || o.elem_bytes == 0) throw InputError("allreduce: thread " + std::to_string(u) + " gave no operator");
    if (m.buffers[static_cast<std::size_t>(u)].size() != bytes) {
      throw InputError("allreduce: thread " + std::to_string(u) + " gave " +
                       std::to_string(m.buffers[static_cast<std::size_t>(u)].size()) + " bytes, thread 0 gave " +
                       std::to_string(bytes));
    }
    if (bytes % o.elem_bytes != 0) {
      throw InputError("allreduce: " + std::to_string(bytes) + " bytes are not a whole number of " +
                       std::to_string(o.elem_bytes) + "-byte elements");
    }
  }
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw InputError("allreduce: " + std::to_string(bytes) + " bytes; MPI counts stop at " + std::to_string(INT_MAX));
  }
  const std::size_t eb = op.elem_bytes, count = bytes / eb;
  auto& tmp = s.scratch[t];
  const auto fold_local = [&](std::size_t first, std::size_t n) {  // into buffers[t][first, first + n)
    if (s.threads == 1 || n == 0) return;
    s.fold_around(thread, first * eb, n, op, m);
  };
  const auto spread = [&](std::size_t first, std::size_t n) {  // buffers[t]'s range into the others'
    for (int u = 0; u < s.threads; ++u) {
      if (u == thread || n == 0) continue;
      std::memcpy(m.buffers[static_cast<std::size_t>(u)].data() + first * eb, m.buffers[t].data() + first * eb, n * eb);
    }
  };
  const bool rabenseifner = algorithm(bytes) == AllreduceAlgorithm::rabenseifner;
  if (!rabenseifner || !s.split) {
    if (thread == 0) {
      fold_local(0, count);
      if (tmp.size() < bytes) tmp.resize(bytes);
      if (rabenseifner) s.rabenseifner(m.buffers[0].data(), count, op, tmp.data(), 0);
      else s.recursive_doubling(m.buffers[0].data(), count, op, tmp.data(), 0);
      spread(0, count);
    }
  } else {
    // Thread t's slice: elements [first, first + n).
    const std::size_t q = count / static_cast<std::size_t>(s.threads), r = count % static_cast<std::size_t>(s.threads);
    const std::size_t first = t * q + std::min(t, r), n = q + (t < r ? 1 : 0);
    fold_local(first, n);
    if (tmp.size() < n * eb) tmp.resize(n * eb);
    s.rabenseifner(m.buffers[t].data() + first * eb, n, op, tmp.data(), thread);
    spread(first, n);
  }
  if (s.inner) s.inner->arrive_and_wait(thread);  // every result is in place before anyone leaves
}

void Collectives::barrier(int thread) {
  State& s = *s_;
  PB_CHECK(thread >= 0 && thread < s.threads, "Collectives::barrier: thread " + std::to_string(thread) + " outside the process");
  ++s.calls[static_cast<std::size_t>(thread)];
  s.arrive(thread);
  if (thread == 0 && s.processes > 1) {
    // Dissemination: in round k an empty message to the process 2^k after, one from the process
    // 2^k before. A round's source differs from every other round's, so rounds never cross.
    const int P = s.processes, tag = s.threads + 1;
    for (int dist = 1; dist < P; dist <<= 1) {
      MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      MPI_Irecv(nullptr, 0, MPI_BYTE, (s.process - dist + P) % P, tag, s.comm, &r[0]);
      MPI_Isend(nullptr, 0, MPI_BYTE, (s.process + dist) % P, tag, s.comm, &r[1]);
      s.wait_all(2, r);
    }
  }
  s.arrive(thread);
}

void Collectives::bcast(int thread, std::span<std::byte> buffer, int root) {
  State& s = *s_;
  PB_CHECK(thread >= 0 && thread < s.threads, "Collectives::bcast: thread " + std::to_string(thread) + " outside the process");
  const auto t = static_cast<std::size_t>(thread);
  const std::uint64_t call = s.calls[t]++;
  State::Published& m = s.pub[call % 2];
  m.buffers[t] = buffer;
  m.roots[t] = root;
  const int root_process = root / s.threads, leader = s.process == root_process ? root % s.threads : 0;
  if (s.ring) {
    if (buffer.size() <= s.options.staged_up_to) {
      // The ring: the leader takes its messages, fills the slot and leaves; the others copy
      // from it once it is filled and check the leader's size and root against their own.
      s.check_own_root("bcast", root);
      const std::uint64_t n = s.ring_calls[t]++;
      State::RingSlot& sl = s.ring[n % State::kRingDepth];
      if (thread == leader) {
        s.ring_wait([&] { return sl.free_for.load(std::memory_order_acquire) == n; });
        s.mpi_turn(n);
        if (s.processes > 1 && !buffer.empty()) s.tree_bcast(buffer.data(), buffer.size(), root_process);
        s.mpi_done(n);
        if (!buffer.empty()) std::memcpy(s.ring_data(sl, 0), buffer.data(), buffer.size());
        sl.bytes = buffer.size();
        sl.root = root;
        sl.readers_left.store(s.threads - 1, std::memory_order_relaxed);
        sl.ready.store(n + 1, std::memory_order_release);
        return;
      }
      s.ring_wait([&] { return sl.ready.load(std::memory_order_acquire) == n + 1; });
      const std::size_t bytes = sl.bytes;
      const int leader_root = sl.root;
      const bool same = bytes == buffer.size() && leader_root == root;
      if (same && bytes > 0) std::memcpy(buffer.data(), s.ring_data(sl, 0), bytes);
      if (sl.readers_left.fetch_sub(1, std::memory_order_acq_rel) == 1)
        sl.free_for.store(n + State::kRingDepth, std::memory_order_release);
      s.check_leader("bcast", thread, leader, buffer.size(), bytes, root, leader_root);
      return;
    }
  }
  s.arrive(thread);
  const std::size_t bytes = m.buffers[0].size();
  s.check_same_size("bcast", bytes, m, [](const State::Published& st, int u) { return st.buffers[static_cast<std::size_t>(u)].size(); });
  s.check_root("bcast", m);
  if (thread == leader) {
    if (s.processes > 1 && bytes > 0) s.tree_bcast(buffer.data(), bytes, root_process);
    for (int u = 0; u < s.threads; ++u)
      if (u != leader && bytes > 0) std::memcpy(m.buffers[static_cast<std::size_t>(u)].data(), buffer.data(), bytes);
  }
  s.arrive(thread);
}

void Collectives::reduce(int thread, std::span<std::byte> buffer, int root, const ReduceFn& op) {
  State& s = *s_;
  PB_CHECK(thread >= 0 && thread < s.threads, "Collectives::reduce: thread " + std::to_string(thread) + " outside the process");
  const auto t = static_cast<std::size_t>(thread);
  const std::uint64_t call = s.calls[t]++;
  const int root_process = root / s.threads, leader = s.process == root_process ? root % s.threads : 0;
  if (s.ring && buffer.size() <= s.options.staged_up_to) {
    // The ring: every thread deposits its input in its part of the slot and leaves, except the
    // leader, which waits for the deposits, folds them in thread order and takes the messages.
    s.check_own_root("reduce", root);
    s.check_own_op("reduce", buffer.size(), op);
    const std::uint64_t n = s.ring_calls[t]++;
    State::RingSlot& sl = s.ring[n % State::kRingDepth];
    s.deposit(sl, n, thread, buffer, root);
    if (thread != leader) return;
    s.collect(sl, n, "reduce", thread);  // throws on a size or root that differs, having released the slot
    const std::size_t bytes = buffer.size(), count = bytes / op.elem_bytes;
    if (count > 0) {
      op.fn(s.ring_data(sl, 0), s.ring_data(sl, 1), buffer.data(), count, op.state);
      for (int u = 2; u < s.threads; ++u) op.fn(buffer.data(), s.ring_data(sl, u), buffer.data(), count, op.state);
    }
    sl.free_for.store(n + State::kRingDepth, std::memory_order_release);
    s.mpi_turn(n);
    s.reduce_to_root(t, buffer.data(), count, op, root_process);
    s.mpi_done(n);
    return;
  }
  State::Published& m = s.pub[call % 2];
  m.buffers[t] = buffer;
  m.ops[t] = &op;
  m.roots[t] = root;
  s.arrive(thread);
  const std::size_t bytes = m.buffers[0].size();
  s.check_same_size("reduce", bytes, m, [](const State::Published& st, int u) { return st.buffers[static_cast<std::size_t>(u)].size(); });
  s.check_root("reduce", m);
  s.check_op("reduce", bytes, m);
  if (thread == leader) {
    const std::size_t count = bytes / op.elem_bytes;
    s.fold_into(leader, count, op, m);
    s.reduce_to_root(t, buffer.data(), count, op, root_process);
  }
  s.arrive(thread);
}

void Collectives::gather(int thread, std::span<const std::byte> block, std::span<std::byte> out, int root) {
  State& s = *s_;
  PB_CHECK(thread >= 0 && thread < s.threads, "Collectives::gather: thread " + std::to_string(thread) + " outside the process");
  const auto t = static_cast<std::size_t>(thread);
  const std::uint64_t call = s.calls[t]++;
  const int root_process = root / s.threads, leader = s.process == root_process ? root % s.threads : 0;
  // The ring (small, T > 1): every thread deposits its block in its part of the slot and leaves,
  // except the leader, which waits for the deposits and sends from the slot.
  const bool ring = s.ring && block.size() <= s.options.staged_up_to;
  State::RingSlot* sl = nullptr;
  std::uint64_t ring_call = 0;
  State::Published& m = s.pub[call % 2];
  std::size_t bytes = block.size();
  if (ring) {
    s.check_own_root("gather", root);
    ring_call = s.ring_calls[t]++;
    sl = &s.ring[ring_call % State::kRingDepth];
    s.deposit(*sl, ring_call, thread, block, root);
    if (thread != leader) return;
    s.collect(*sl, ring_call, "gather", thread);
    s.mpi_turn(ring_call);
  } else {
    m.blocks[t] = block;
    m.buffers[t] = out;
    m.roots[t] = root;
    s.arrive(thread);
    bytes = m.blocks[0].size();
    s.check_same_size("gather", bytes, m, [](const State::Published& st, int u) { return st.blocks[static_cast<std::size_t>(u)].size(); });
    s.check_root("gather", m);
  }
  const auto release = [&] {  // the slot and the turn of the messages
    if (!ring) return;
    sl->free_for.store(ring_call + State::kRingDepth, std::memory_order_release);
    s.mpi_done(ring_call);
  };
  const auto src = [&](int u) -> const std::byte* {
    return ring ? s.ring_data(*sl, u) : m.blocks[static_cast<std::size_t>(u)].data();
  };
  // The root's out: the leader's own in the ring (the only thread of the ring that reads it).
  const std::span<std::byte> root_out_span = ring ? out : m.buffers[static_cast<std::size_t>(leader)];
  const std::size_t tb = bytes * static_cast<std::size_t>(s.threads);  // one process's blocks
  const std::size_t all = tb * static_cast<std::size_t>(s.processes);
  if (all > static_cast<std::size_t>(INT_MAX)) {
    release();
    throw InputError("gather: " + std::to_string(all) + " bytes in all; MPI counts stop at " + std::to_string(INT_MAX));
  }
  if (s.process == root_process && root_out_span.size() < all) {
    release();
    throw InputError("gather: the root's buffer has " + std::to_string(root_out_span.size()) +
                     " bytes, the blocks need " + std::to_string(all));
  }
  if (thread == leader && bytes > 0) {
    const int P = s.processes;
    const int vr = (s.process - root_process + P) % P;
    const auto real = [&](int r) { return (r + root_process) % P; };
    // This process's subtree: processes vr .. vr + span − 1 (relative), gathered in that order.
    int span = P - vr;
    for (int mask = 1; mask < P; mask <<= 1) {
      if ((vr & mask) != 0) {
        span = std::min(mask, P - vr);
        break;
      }
    }
    std::byte* root_out = root_out_span.data();
    // A process without children (span 1) sends its T blocks straight from the threads' buffers,
    // one message each: no copy into staging. Its parent receives them as T messages.
    if (span == 1 && vr != 0) {
      thread_local std::vector<MPI_Request> r;
      r.clear();
      for (int u = 0; u < s.threads; ++u) {
        const int mask = vr & -vr;  // the parent is vr − lowest bit
        State::post(r, false, src(u), bytes,
                    s.fragmented(bytes) ? s.options.fragment_bytes : bytes, real(vr - mask), s.rooted_tag(), s.comm);
      }
      s.wait_all(static_cast<int>(r.size()), r.data());
    } else {
      std::byte* staging = root_out;  // at the root's process, when it is process 0, the blocks land in place
      if (!(vr == 0 && root_process == 0)) {
        auto& tmp = s.scratch[t];
        if (tmp.size() < tb * static_cast<std::size_t>(span)) tmp.resize(tb * static_cast<std::size_t>(span));
        staging = tmp.data();
      }
      for (int u = 0; u < s.threads; ++u)
        std::memmove(staging + static_cast<std::size_t>(u) * bytes, src(u), bytes);
      thread_local std::vector<MPI_Request> r;
      for (int mask = 1; mask < P; mask <<= 1) {
        if ((vr & mask) != 0) {
          s.send(staging, tb * static_cast<std::size_t>(span), real(vr - mask), s.rooted_tag());
          break;
        }
        if (vr + mask < P) {
          const int n = std::min(mask, P - vr - mask);
          std::byte* into = staging + tb * static_cast<std::size_t>(mask);
          if (n == 1) {  // a child without children: its T blocks, one message each
            r.clear();
            for (int u = 0; u < s.threads; ++u) {
              State::post(r, true, into + static_cast<std::size_t>(u) * bytes, bytes,
                          s.fragmented(bytes) ? s.options.fragment_bytes : bytes, real(vr + mask), s.rooted_tag(), s.comm);
            }
            s.wait_all(static_cast<int>(r.size()), r.data());
          } else {
            s.recv(into, tb * static_cast<std::size_t>(n), real(vr + mask), s.rooted_tag());
          }
        }
      }
      if (vr == 0 && root_process != 0) {
        for (int q = 0; q < P; ++q)
          std::memcpy(root_out + tb * static_cast<std::size_t>(real(q)), staging + tb * static_cast<std::size_t>(q), tb);
      }
    }
  }
  release();
  if (!ring) s.arrive(thread);
}

}  // namespace postbox::cluster
