// The barrier across processes (cluster/barrier.hpp; docs/cluster.md, "The barrier across
// processes").
//
// Per phase: the intra-process barrier's completion step (on_local_complete) builds this
// process's record (threads dropping, the local fold of arrive_and_reduce values) and starts
// the leaders' step. A thread inside a blocking call (arrive_and_wait, wait, arrive_and_reduce)
// carries the leaders' step to its end right there, so the intra-process wake-up releases the
// threads once the phase is complete in the whole job (one local synchronisation per phase). A
// thread inside arrive() or arrive_and_drop() must not wait (G2): it kicks the progress thread
// instead, and threads that reach wait() take over (drive_mu_ serialises the drivers).
//
// Leaders' step (drive): with a completion function, records up the binomial arrival tree of
// the processes still in (barrier_shape fibo, root = lowest process), the completion function
// at the root, the records of every process down the Fibo wake-up tree; without one, the
// dissemination exchange (exchange()). Every process then applies the records (drops, the fold
// in process order). Messages: MPI_Isend / matched probe (MPI_Improbe, MPI_Mrecv) on a
// duplicate of the communicator (the exchange's rounds: a receive posted before the send, see
// kInlineBytes), so they never match the application's messages. Between two
// processes the messages of one tag are in phase order (MPI's non-overtaking rule) and every
// message carries its phase, checked on receipt.
#include "postbox/cluster/barrier.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "mpi_poll.hpp"
#include "postbox/collectives/barrier_shape.hpp"
#include "postbox/runtime/calibrate.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/internal/sync.hpp"
#include "postbox/runtime/topology.hpp"
#include "postbox/runtime/wait.hpp"

namespace postbox::cluster {
namespace internal {
namespace {

constexpr int kTagArrive = 1;
constexpr int kTagWake = 2;
constexpr int kTagExchange = 3;  // + the round of the dissemination exchange
// A round's message of more than kInlineBytes goes on kTagExchange + kTagBig + round, announced
// by an empty message on the round's own tag: the receiver posts its receive for the round
// before it sends (kInlineBytes, enough for the header and a few records), so the usual message
// is matched on arrival instead of by probing.
constexpr int kTagBig = 64;
constexpr std::size_t kInlineBytes = 256;
constexpr std::uint32_t kBroken = 1;

// Wrap-safe "phase a is phase b or a later one" (G5): the runtime's one comparison.
using postbox::internal::reached;

// The calling thread is inside a barrier call that may wait (arrive_and_wait, wait,
// arrive_and_reduce): the completion step it runs may carry the leaders' step.
thread_local bool t_may_wait = false;

struct MayWait {
  bool saved;
  explicit MayWait(bool v) : saved(t_may_wait) { t_may_wait = v; }
  ~MayWait() { t_may_wait = saved; }
  MayWait(const MayWait&) = delete;
  MayWait& operator=(const MayWait&) = delete;
};

// Message: Header, then `records` records, each a RecordHead and `size` bytes of value.
struct Header {
  std::uint64_t phase;
  std::uint32_t flags;
  std::uint32_t records;
};
struct RecordHead {
  std::int32_t process;
  std::int32_t dropped;
  std::uint32_t size;  // 0: no thread of the process called arrive_and_reduce this phase
  std::uint32_t pad;
};

struct Record {
  int process = 0;
  int dropped = 0;
  std::vector<std::byte> value;
};

void append(std::vector<std::byte>& out, const void* p, std::size_t n) {
  if (n == 0) return;
  const std::size_t at = out.size();
  out.resize(at + n);
  std::memcpy(out.data() + at, p, n);
}

// Into `out` (cleared first; its capacity is kept, so a reused buffer allocates nothing).
void encode_into(std::vector<std::byte>& out, std::uint64_t phase, std::uint32_t flags, const std::vector<Record>& records) {
  out.clear();
  const Header h{phase, flags, static_cast<std::uint32_t>(records.size())};
  append(out, &h, sizeof h);
  for (const Record& r : records) {
    const RecordHead rh{r.process, r.dropped, static_cast<std::uint32_t>(r.value.size()), 0};
    append(out, &rh, sizeof rh);
    append(out, r.value.data(), r.value.size());
  }
}

std::vector<std::byte> encode(std::uint64_t phase, std::uint32_t flags, const std::vector<Record>& records) {
  std::vector<std::byte> out;
  encode_into(out, phase, flags, records);
  return out;
}

Header decode(const std::vector<std::byte>& in, std::vector<Record>& records) {
  PB_CHECK(in.size() >= sizeof(Header), "cluster barrier: short message");
  Header h{};
  std::memcpy(&h, in.data(), sizeof h);
  std::size_t at = sizeof h;
  for (std::uint32_t i = 0; i < h.records; ++i) {
    PB_CHECK(in.size() >= at + sizeof(RecordHead), "cluster barrier: short record");
    RecordHead rh{};
    std::memcpy(&rh, in.data() + at, sizeof rh);
    at += sizeof rh;
    PB_CHECK(in.size() >= at + rh.size, "cluster barrier: short record value");
    Record r{rh.process, rh.dropped, {}};
    r.value.assign(in.begin() + static_cast<std::ptrdiff_t>(at), in.begin() + static_cast<std::ptrdiff_t>(at + rh.size));
    at += rh.size;
    records.push_back(std::move(r));
  }
  return h;
}

}  // namespace

class ClusterEngine {
 public:
  ClusterEngine(MPI_Comm comm, int threads, ClusterBarrierOptions options);
  ~ClusterEngine();

  void arrive_and_wait(int thread, ClusterReduce* args);
  BarrierToken arrive(int thread);
  void wait(int thread, BarrierToken token);
  void arrive_and_drop(int thread);
  void abort() noexcept;
  void set_phase(std::uint64_t phase);

  int threads_ = 0;
  int process_ = 0;
  int processes_ = 0;
  std::atomic<int> participants_{0};
  std::string reason_;
  MPI_Comm comm_ = MPI_COMM_NULL;

 private:
  struct alignas(postbox::internal::kCacheLine) Slot {
    std::uint64_t phase = 0;
    ClusterReduce* args = nullptr;
    bool dropping = false;
  };
  struct Links {
    bool root = false;
    int arrival_parent = -1;
    std::vector<int> arrival_children;
    int wake_parent = -1;
    std::vector<int> wake_children;
  };

  void check_thread(int thread) const;
  std::uint64_t begin(int thread, ClusterReduce* args, bool drop);
  // The exception a thread leaving a broken phase throws: the completion function's own for the
  // first thread of the root process to ask (drive_mu_ held), else BarrierBroken; Aborted first.
  [[noreturn]] void throw_phase_error();
  void throw_if_broken() const;
  void on_local_complete();
  // Carries phase e's leaders' step to its end; drive_mu_ held.
  void drive(std::uint64_t e);
  // drive() without a completion function: the dissemination exchange.
  void exchange(std::uint64_t e);
  void finish(std::uint64_t e, std::vector<MPI_Request>& sends);
  void leave(std::uint64_t e);
  void apply(std::uint32_t flags, const std::vector<Record>& records);
  void rebuild_links();
  std::vector<std::byte> receive(int from, int tag);
  // Into buf (resized to the message; a reused buffer allocates only to grow).
  void receive_into(int from, int tag, std::vector<std::byte>& buf);
  void poll_pause(MpiPoll& poll) const;
  void progress_loop();

  std::unique_ptr<AnyBarrier> intra_;
  std::function<void()> completion_;
  SendRecv inter_;
  bool oversubscribed_ = false;  // the node's threads outnumber its CPUs: MPI polls yield (mpi_poll.hpp)
  std::vector<Slot> slots_;

  // Written by the completion step (on_local_complete) and by drive(), which are ordered by
  // the phases (drive_mu_ and the intra-process barrier).
  Record local_{};
  std::vector<ClusterReduce*> local_reducers_;
  std::vector<int> remaining_;  // by process: threads still in
  std::vector<int> live_;       // processes still in the leaders' tree, ascending
  Links links_;

  std::atomic<std::uint64_t> pending_{0};  // the last phase whose leaders' step was started
  std::atomic<std::uint64_t> done_{0};     // the last phase whose leaders' step ended
  std::atomic<bool> broken_{false};
  std::atomic<bool> aborted_{false};
  std::exception_ptr root_error_;        // the completion function's exception (drive_mu_)
  bool root_error_delivered_ = false;    // (drive_mu_)
  std::mutex drive_mu_;

  // exchange()'s buffers, reused from phase to phase so that a plain phase allocates nothing
  // (drive_mu_).
  std::vector<Record> x_records_;
  std::vector<Record> x_incoming_;
  std::vector<MPI_Request> x_sends_;
  std::vector<std::vector<std::byte>> x_out_;  // one per round
  std::vector<std::byte> x_in_;
  BarrierShape x_shape_;  // the dissemination shape over live_ (n = 0 until the first exchange)

  std::atomic<std::uint32_t> kick_{0};
  std::atomic<std::uint32_t> kick_sleepers_{0};  // the progress thread asleep on kick_
  std::atomic<bool> stop_{false};
  std::thread progress_;
};

ClusterEngine::ClusterEngine(MPI_Comm comm, int threads, ClusterBarrierOptions options)
    : completion_(std::move(options.completion)) {
  // Every process takes part in the comparison before any throws, so none is left waiting.
  const auto& names = barrier_names();
  const bool known = std::find(names.begin(), names.end(), options.intra_algorithm) != names.end();
  int mine[3] = {threads, -threads, known ? 1 : 0}, agreed[3] = {0, 0, 0};
  MPI_Allreduce(mine, agreed, 3, MPI_INT, MPI_MIN, comm);
  const int lo = agreed[0], hi = -agreed[1];
  if (agreed[2] == 0) throw InputError("cluster barrier: unknown intra-process barrier '" + options.intra_algorithm + "' (in some process)");
  if (lo < 1) throw InputError("cluster barrier: threads per process must be at least 1 (got " + std::to_string(lo) + ")");
  if (lo != hi) {
    throw InputError("cluster barrier: threads per process differ across processes (" + std::to_string(lo) + " to " +
                     std::to_string(hi) + ")");
  }
  if (options.intra.completion) {
    throw InputError("cluster barrier: intra.completion must be empty (the job-wide completion is options.completion)");
  }
  threads_ = threads;
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &process_);
  MPI_Comm_size(comm_, &processes_);
  participants_.store(threads_ * processes_, std::memory_order_relaxed);
  slots_ = std::vector<Slot>(static_cast<std::size_t>(threads_));
  remaining_.assign(static_cast<std::size_t>(processes_), threads_);
  for (int q = 0; q < processes_; ++q) live_.push_back(q);

  std::string source;
  inter_ = options.inter_send_recv ? *options.inter_send_recv : inter_latency(&source);
  if (options.inter_send_recv) source = "options";
  // Every process builds the same trees: process 0's figures (its file or options) for all.
  std::int64_t sr[4] = {inter_.s.num(), inter_.s.den(), inter_.r.num(), inter_.r.den()};
  MPI_Bcast(sr, 4, MPI_INT64_T, 0, comm_);
  inter_ = SendRecv{Rational(sr[0], sr[1]), Rational(sr[2], sr[3])};
  if (process_ != 0) source = "process 0's " + source;
  rebuild_links();

  const unsigned cpus = options.intra.cpus != 0 ? options.intra.cpus : static_cast<unsigned>(allowed_cpu_count());
  oversubscribed_ = node_oversubscribed(comm_, threads_, cpus);

  options.intra.completion = [this] { on_local_complete(); };
  intra_ = make_barrier(options.intra_algorithm, threads_, std::move(options.intra));
  const std::string leaders =
      completion_ ? "binomial arrival, Fibo wake-up over " + std::to_string(processes_) + " processes (s = " + inter_.s.str() +
                        " ns, r = " + inter_.r.str() + " ns from " + source + ")"
                  : "dissemination over " + std::to_string(processes_) +
                        " processes (no completion function: one message per process and round, ceil(log2 P) rounds)";
  reason_ = "intra: " + intra_->reason() + "; leaders: " + leaders +
            (oversubscribed_ ? "; polling MPI with a yield between polls (oversubscribed)" : "");
  progress_ = std::thread([this] { progress_loop(); });
}

ClusterEngine::~ClusterEngine() {
  {
    // This process's share of a phase its threads arrived at still goes out (a process whose
    // threads all dropped is still in that phase's trees).
    std::lock_guard lock(drive_mu_);
    const std::uint64_t p = pending_.load(std::memory_order_relaxed);
    if (!reached(done_.load(std::memory_order_relaxed), p) && !aborted_.load(std::memory_order_relaxed)) {
      try {
        drive(p);
      } catch (...) {
      }
    }
  }
  // release: the progress thread's load of stop_ after its wait sees it.
  stop_.store(true, std::memory_order_release);
  postbox::wake(kick_);  // always: the destructor, once
  progress_.join();
  MPI_Comm_free(&comm_);
}

void ClusterEngine::rebuild_links() {
  links_ = Links{};
  const int n = static_cast<int>(live_.size());
  const auto me_it = std::find(live_.begin(), live_.end(), process_);
  if (n == 0 || me_it == live_.end()) return;
  const int me = static_cast<int>(me_it - live_.begin());
  const BarrierShape shape = barrier_shape(BarrierAlgorithm::fibo, n, inter_);
  links_.root = me == 0;
  for (int v = 0; v < n; ++v) {
    for (int c : shape.arrival.children[static_cast<std::size_t>(v)]) {
      if (v == me) links_.arrival_children.push_back(live_[static_cast<std::size_t>(c)]);
      if (c == me) links_.arrival_parent = live_[static_cast<std::size_t>(v)];
    }
    for (int c : shape.wakeup.children[static_cast<std::size_t>(v)]) {
      if (v == me) links_.wake_children.push_back(live_[static_cast<std::size_t>(c)]);
      if (c == me) links_.wake_parent = live_[static_cast<std::size_t>(v)];
    }
  }
}

void ClusterEngine::check_thread(int thread) const {
  PB_CHECK(thread >= 0 && thread < threads_, "cluster barrier: thread " + std::to_string(thread) +
                                                 " outside 0.." + std::to_string(threads_ - 1));
}

void ClusterEngine::throw_if_broken() const {
  // relaxed: the flags publish nothing but themselves.
  if (aborted_.load(std::memory_order_relaxed)) throw Aborted();
  if (broken_.load(std::memory_order_relaxed)) throw BarrierBroken();
}

// The start of an arrival: this thread's record for the completion step; returns its phase.
std::uint64_t ClusterEngine::begin(int thread, ClusterReduce* args, bool drop) {
  check_thread(thread);
  throw_if_broken();
  Slot& s = slots_[static_cast<std::size_t>(thread)];
  s.args = args;
  s.dropping = drop;
  return ++s.phase;
}

void ClusterEngine::arrive_and_wait(int thread, ClusterReduce* args) {
  const std::uint64_t e = begin(thread, args, false);
  const MayWait may(true);
  intra_->arrive_and_wait(thread);
  leave(e);
}

BarrierToken ClusterEngine::arrive(int thread) {
  (void)begin(thread, nullptr, false);
  const MayWait may(false);
  return intra_->arrive(thread);
}

void ClusterEngine::wait(int thread, BarrierToken token) {
  check_thread(thread);
  const MayWait may(true);
  intra_->wait(thread, token);
  leave(slots_[static_cast<std::size_t>(thread)].phase);
}

void ClusterEngine::arrive_and_drop(int thread) {
  (void)begin(thread, nullptr, true);
  const MayWait may(false);
  intra_->arrive_and_drop(thread);
}

void ClusterEngine::abort() noexcept {
  // relaxed: the drivers poll it; the intra barrier's abort wakes its waiters.
  aborted_.store(true, std::memory_order_relaxed);
  intra_->abort();
}

// The intra-process barrier's completion step: every thread of this process has arrived and
// none has left.
void ClusterEngine::on_local_complete() {
  const std::uint64_t e = pending_.load(std::memory_order_relaxed) + 1;
  local_ = Record{process_, 0, {}};
  local_reducers_.clear();
  std::vector<std::byte> values;
  for (Slot& s : slots_) {
    if (s.phase != e) continue;  // dropped in an earlier phase
    if (s.dropping) ++local_.dropped;
    if (s.args == nullptr) continue;
    PB_CHECK(local_reducers_.empty() || (s.args->fold == local_reducers_[0]->fold && s.args->size == local_reducers_[0]->size),
             "cluster barrier: arrive_and_reduce called with different value or op types in one phase");
    local_reducers_.push_back(s.args);
    append(values, s.args->value, s.args->size);
  }
  if (!local_reducers_.empty()) {
    local_.value.resize(local_reducers_[0]->size);
    local_reducers_[0]->fold(values.data(), static_cast<int>(local_reducers_.size()), local_reducers_[0]->op,
                             local_.value.data());
  }
  // release: the progress thread and the waiters read local_ after they see the phase.
  pending_.store(e, std::memory_order_release);
  if (!t_may_wait) {
    postbox::wake_counted(kick_, kick_sleepers_);
    return;
  }
  std::lock_guard lock(drive_mu_);
  drive(e);
  // Throwing here breaks the intra-process barrier: this thread gets the exception, the
  // others of this process BarrierBroken (barrier.hpp's rule), which is the job-wide rule.
  if (aborted_.load(std::memory_order_relaxed) || broken_.load(std::memory_order_relaxed)) throw_phase_error();
}

void ClusterEngine::throw_phase_error() {
  if (aborted_.load(std::memory_order_relaxed)) throw Aborted();
  if (root_error_ && !root_error_delivered_) {
    root_error_delivered_ = true;
    std::rethrow_exception(root_error_);
  }
  throw BarrierBroken();
}

// After the intra-process barrier released this thread from phase e: the phase is over once
// the leaders' step is (a waiter carries it on when nobody else does).
void ClusterEngine::leave(std::uint64_t e) {
  // acquire: the drivers' writes (reduce results, participants, the flags) before done_.
  if (!reached(done_.load(std::memory_order_acquire), e)) {
    std::lock_guard lock(drive_mu_);
    if (!reached(done_.load(std::memory_order_relaxed), e)) drive(e);
  }
  if (aborted_.load(std::memory_order_relaxed)) throw Aborted();
  if (broken_.load(std::memory_order_relaxed)) {
    std::lock_guard lock(drive_mu_);
    throw_phase_error();
  }
}

void ClusterEngine::poll_pause(MpiPoll& poll) const {
  if (aborted_.load(std::memory_order_relaxed)) throw Aborted();
  poll.pause();
}

std::vector<std::byte> ClusterEngine::receive(int from, int tag) {
  std::vector<std::byte> buf;
  receive_into(from, tag, buf);
  return buf;
}

void ClusterEngine::receive_into(int from, int tag, std::vector<std::byte>& buf) {
  MpiPoll poll(oversubscribed_);
  int flag = 0;
  MPI_Message msg = MPI_MESSAGE_NULL;
  MPI_Status status;
  for (;;) {
    MPI_Improbe(from, tag, comm_, &flag, &msg, &status);
    if (flag != 0) break;
    poll_pause(poll);
  }
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  buf.resize(static_cast<std::size_t>(count));
  MPI_Mrecv(buf.data(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
}

void ClusterEngine::drive(std::uint64_t e) {
  if (reached(done_.load(std::memory_order_relaxed), e)) return;
  if (aborted_.load(std::memory_order_relaxed)) throw Aborted();
  // acquire: local_ written by the completion step before it published e.
  PB_CHECK(pending_.load(std::memory_order_acquire) == e, "cluster barrier: leaders' step out of order");
  if (!completion_) {
    exchange(e);
    return;
  }
  std::vector<Record> records;
  if (local_.dropped != 0 || !local_.value.empty()) records.push_back(local_);
  std::uint32_t flags = 0;
  for (int c : links_.arrival_children) {
    const Header h = decode(receive(c, kTagArrive), records);
    PB_CHECK(h.phase == e, "cluster barrier: process " + std::to_string(c) + " arrived for another phase");
    flags |= h.flags;
  }
  std::vector<MPI_Request> sends;
  std::vector<std::vector<std::byte>> buffers;
  const auto send = [&](int to, int tag, std::vector<std::byte> bytes) {
    buffers.push_back(std::move(bytes));
    sends.emplace_back();
    MPI_Isend(buffers.back().data(), static_cast<int>(buffers.back().size()), MPI_BYTE, to, tag, comm_, &sends.back());
  };
  buffers.reserve(links_.wake_children.size() + 1);
  if (!links_.root) {
    send(links_.arrival_parent, kTagArrive, encode(e, flags, records));
    records.clear();
    const Header h = decode(receive(links_.wake_parent, kTagWake), records);
    PB_CHECK(h.phase == e, "cluster barrier: woken for another phase");
    flags = h.flags;
  } else {
    // Every participant of the job has arrived (G4).
    if (completion_ && (flags & kBroken) == 0) {
      try {
        completion_();
      } catch (...) {
        root_error_ = std::current_exception();
        flags |= kBroken;
      }
    }
    std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.process < b.process; });
  }
  if (!links_.wake_children.empty()) {
    const std::vector<std::byte> wake = encode(e, flags, records);
    for (int c : links_.wake_children) send(c, kTagWake, wake);
  }
  apply(flags, records);
  finish(e, sends);
}

// Dissemination (Hensgen, Finkel and Manber): in round k every process still in sends what it
// knows (its own record and those it has received) to the process 2^k after it among live_ and
// receives from the one 2^k before it, so after ceil(log2 n) rounds every process has heard,
// directly or not, from every other: the phase is complete everywhere at once, one message
// latency per round where the trees take one up and one down. The records (drops, reduce
// values) travel along and are merged by process, so every process applies the same set.
void ClusterEngine::exchange(std::uint64_t e) {
  std::vector<Record>& records = x_records_;
  records.clear();
  if (local_.dropped != 0 || !local_.value.empty()) records.push_back(local_);
  const int n = static_cast<int>(live_.size());
  const int me = static_cast<int>(std::find(live_.begin(), live_.end(), process_) - live_.begin());
  PB_CHECK(me < n, "cluster barrier: a phase of a process that left the leaders' step");
  // The dissemination shape over the live processes (barrier_shape: offsets 1, 2, 4, ...),
  // made again only when a drop changed their number.
  if (x_shape_.n != n) x_shape_ = barrier_shape(BarrierAlgorithm::dissemination, n, SendRecv{Rational(1), Rational(1)});
  const int rounds = static_cast<int>(x_shape_.m);
  std::vector<MPI_Request>& sends = x_sends_;
  sends.assign(2 * static_cast<std::size_t>(rounds), MPI_REQUEST_NULL);  // per round: the message, the big one
  if (x_out_.size() < static_cast<std::size_t>(rounds)) x_out_.resize(static_cast<std::size_t>(rounds));
  for (int k = 0; k < rounds; ++k) {
    const int d = static_cast<int>(x_shape_.offset[static_cast<std::size_t>(k)]);
    const int from = live_[static_cast<std::size_t>((me - d + n) % n)];
    const int to = live_[static_cast<std::size_t>((me + d) % n)];
    const int tag = kTagExchange + k;
    x_in_.resize(kInlineBytes);
    MPI_Request recv = MPI_REQUEST_NULL;
    MPI_Irecv(x_in_.data(), static_cast<int>(kInlineBytes), MPI_BYTE, from, tag, comm_, &recv);
    std::vector<std::byte>& out = x_out_[static_cast<std::size_t>(k)];
    encode_into(out, e, 0, records);
    MPI_Request* req = &sends[2 * static_cast<std::size_t>(k)];
    if (out.size() <= kInlineBytes) {
      MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_BYTE, to, tag, comm_, req);
    } else {
      MPI_Isend(nullptr, 0, MPI_BYTE, to, tag, comm_, req);
      MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_BYTE, to, tag + kTagBig, comm_, req + 1);
    }
    MPI_Status status;
    MpiPoll poll(oversubscribed_);
    try {
      for (;;) {
        int done = 0;
        MPI_Test(&recv, &done, &status);
        if (done != 0) break;
        poll_pause(poll);
      }
    } catch (...) {
      // Aborted: the posted receive must not outlive this wait (its buffer is reused).
      MPI_Cancel(&recv);
      MPI_Wait(&recv, MPI_STATUS_IGNORE);
      throw;
    }
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    x_incoming_.clear();
    if (count == 0) {
      receive_into(from, tag + kTagBig, x_in_);
    } else {
      x_in_.resize(static_cast<std::size_t>(count));
    }
    const Header h = decode(x_in_, x_incoming_);
    PB_CHECK(h.phase == e, "cluster barrier: process " + std::to_string(from) + " sent another phase's round");
    for (Record& r : x_incoming_) {
      const bool known = std::any_of(records.begin(), records.end(), [&](const Record& x) { return x.process == r.process; });
      if (!known) records.push_back(std::move(r));
    }
  }
  std::sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.process < b.process; });
  apply(0, records);
  finish(e, sends);
}

// The end of a phase's leaders' step: once this process's sends have left, the phase is done here.
void ClusterEngine::finish(std::uint64_t e, std::vector<MPI_Request>& sends) {
  MpiPoll poll(oversubscribed_);
  for (;;) {
    int all = 0;
    MPI_Testall(static_cast<int>(sends.size()), sends.data(), &all, MPI_STATUSES_IGNORE);
    if (all != 0) break;
    poll_pause(poll);
  }
  // release: apply()'s writes before a waiter's acquire load in leave().
  done_.store(e, std::memory_order_release);
}

void ClusterEngine::apply(std::uint32_t flags, const std::vector<Record>& records) {
  // relaxed: read after done_'s acquire (or the intra barrier's release).
  if ((flags & kBroken) != 0) broken_.store(true, std::memory_order_relaxed);
  bool left = false;
  int dropped = 0;
  std::vector<std::byte> values;
  int n = 0;
  for (const Record& r : records) {
    dropped += r.dropped;
    int& rem = remaining_[static_cast<std::size_t>(r.process)];
    rem -= r.dropped;
    PB_CHECK(rem >= 0, "cluster barrier: more threads dropped than the process has");
    if (rem == 0) left = true;
    if (r.value.empty() || local_reducers_.empty()) continue;
    PB_CHECK(r.value.size() == local_reducers_[0]->size,
             "cluster barrier: arrive_and_reduce called with different value types in one phase (process " +
                 std::to_string(r.process) + ")");
    append(values, r.value.data(), r.value.size());
    ++n;
  }
  if (dropped != 0) participants_.fetch_sub(dropped, std::memory_order_relaxed);
  if (!local_reducers_.empty()) {
    std::vector<std::byte> result(local_reducers_[0]->size);
    local_reducers_[0]->fold(values.data(), n, local_reducers_[0]->op, result.data());
    for (ClusterReduce* a : local_reducers_) a->store(a->out, result.data());
  }
  if (left) {
    std::erase_if(live_, [&](int q) { return remaining_[static_cast<std::size_t>(q)] == 0; });
    rebuild_links();
  }
}

void ClusterEngine::progress_loop() {
  // A phase is pending that nobody has completed, and no abort: the progress thread drives it.
  const auto work = [this] {
    return !reached(done_.load(std::memory_order_acquire), pending_.load(std::memory_order_acquire)) &&
           !aborted_.load(std::memory_order_relaxed);
  };
  for (;;) {
    const std::uint32_t k = kick_.load(std::memory_order_seq_cst);  // seq_cst: pairs with the kick
    // acquire: the destructor's release store.
    if (stop_.load(std::memory_order_acquire)) return;
    const std::uint64_t p = pending_.load(std::memory_order_acquire);
    if (!reached(done_.load(std::memory_order_acquire), p) && !aborted_.load(std::memory_order_relaxed)) {
      std::lock_guard lock(drive_mu_);
      try {
        drive(p);
      } catch (const Aborted&) {
      }
      continue;
    }
    // The progress thread only waits for the next kick: it blocks at once rather than spin or
    // yield a core that the ranks of this process need.
    // The predicate reads the work itself too: a kick that finds the thread not yet counted
    // asleep changes neither kick_ nor anything but pending_ (wake_counted()).
    (void)wait_counted(WaitPolicy{0, 0}, kick_, kick_sleepers_, [&] {
      return kick_.load(std::memory_order_seq_cst) != k || stop_.load(std::memory_order_acquire) || work();
    });
  }
}

void ClusterEngine::set_phase(std::uint64_t phase) {
  postbox::internal::BarrierTesting::set_phase(*intra_, phase);
  for (Slot& s : slots_) s.phase = phase;
  pending_.store(phase, std::memory_order_relaxed);
  done_.store(phase, std::memory_order_relaxed);
}

}  // namespace internal

ClusterBarrier::ClusterBarrier(MPI_Comm comm, int threads, ClusterBarrierOptions options)
    : engine_(std::make_unique<internal::ClusterEngine>(comm, threads, std::move(options))) {}
ClusterBarrier::~ClusterBarrier() = default;

void ClusterBarrier::arrive_and_wait(int thread) { engine_->arrive_and_wait(thread, nullptr); }
BarrierToken ClusterBarrier::arrive(int thread) { return engine_->arrive(thread); }
void ClusterBarrier::wait(int thread, BarrierToken token) { engine_->wait(thread, token); }
void ClusterBarrier::arrive_and_drop(int thread) { engine_->arrive_and_drop(thread); }
void ClusterBarrier::abort() noexcept { engine_->abort(); }
void ClusterBarrier::reduce_impl(int thread, internal::ClusterReduce* args) { engine_->arrive_and_wait(thread, args); }

int ClusterBarrier::size() const noexcept { return engine_->threads_ * engine_->processes_; }
int ClusterBarrier::participants() const noexcept {
  return engine_->participants_.load(std::memory_order_relaxed);  // relaxed: a snapshot
}
int ClusterBarrier::threads() const noexcept { return engine_->threads_; }
int ClusterBarrier::process() const noexcept { return engine_->process_; }
int ClusterBarrier::processes() const noexcept { return engine_->processes_; }
int ClusterBarrier::rank(int thread) const noexcept { return engine_->process_ * engine_->threads_ + thread; }
const std::string& ClusterBarrier::reason() const noexcept { return engine_->reason_; }

SendRecv inter_latency(std::string* source) {
  if (const auto c = load_calibration(); c && c->inter) {
    if (source != nullptr) *source = "the calibration file's inter figures";
    // Whole nanoseconds, at least 1 for s (SendRecv needs s > 0), as calibrated_latency()'s users.
    return SendRecv{Rational(std::max<std::int64_t>(1, std::llround(c->inter->s_ns))),
                    Rational(std::max<std::int64_t>(0, std::llround(c->inter->r_ns)))};
  }
  if (source != nullptr) *source = "the default s = r = 1 us (no inter figures saved)";
  return SendRecv{Rational(1000), Rational(1000)};
}

void abort_job(MPI_Comm comm, int rank, int process, int thread, std::string_view what) noexcept {
  std::fprintf(stderr, "postbox: rank %d (process %d, thread %d) failed: %.*s; ending the job\n", rank, process, thread,
               static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  MPI_Abort(comm, 1);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest if it did
}

void run_threads(const ClusterBarrier& barrier, const std::function<void(int thread)>& fn) {
  const auto body = [&](int t) {
    try {
      fn(t);
    } catch (const std::exception& e) {
      abort_job(MPI_COMM_WORLD, barrier.rank(t), barrier.process(), t, e.what());
    } catch (...) {
      abort_job(MPI_COMM_WORLD, barrier.rank(t), barrier.process(), t, "an exception of unknown type");
    }
  };
  std::vector<std::thread> others;
  for (int t = 1; t < barrier.threads(); ++t) others.emplace_back(body, t);
  body(0);
  for (std::thread& th : others) th.join();
}

namespace internal {
void ClusterTesting::set_phase(ClusterBarrier& barrier, std::uint64_t phase) {
  barrier.engine_->set_phase(phase);
}
}  // namespace internal

}  // namespace postbox::cluster
