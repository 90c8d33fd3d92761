#include "postbox/cluster/job.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "mpi_poll.hpp"
#include "postbox/cluster/barrier.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::cluster {

// ---- JobTopology -----------------------------------------------------------------------------

JobTopology::JobTopology(int processes, int threads, std::vector<int> node, std::vector<std::uint8_t> local)
    : processes_(processes), threads_(threads), node_(std::move(node)), local_(std::move(local)) {
  PB_CHECK(processes >= 1 && threads >= 1, "JobTopology: processes and threads must be >= 1");
  PB_CHECK(node_.size() == static_cast<std::size_t>(processes), "JobTopology: one node per process");
  PB_CHECK(local_.size() == static_cast<std::size_t>(processes) * static_cast<std::size_t>(threads) *
                                static_cast<std::size_t>(threads),
           "JobTopology: T x T distances per process");
  for (int n : node_) nodes_ = std::max(nodes_, n + 1);
}

int JobTopology::node_of(int rank) const {
  PB_CHECK(rank >= 0 && rank < p(), "JobTopology: rank " + std::to_string(rank) + " outside the job");
  return node_[static_cast<std::size_t>(process_of(rank))];
}

int JobTopology::distance(int a, int b) const {
  PB_CHECK(a >= 0 && a < p() && b >= 0 && b < p(), "JobTopology: rank outside the job");
  const int pa = process_of(a), pb = process_of(b);
  if (pa != pb) return node_[static_cast<std::size_t>(pa)] == node_[static_cast<std::size_t>(pb)] ? kSameNode : kJob;
  const std::size_t t = static_cast<std::size_t>(threads_);
  return local_[(static_cast<std::size_t>(pa) * t + static_cast<std::size_t>(thread_of(a))) * t +
                static_cast<std::size_t>(thread_of(b))];
}

// ---- Job -------------------------------------------------------------------------------------

namespace {

// The first rank of this process to fail reports and aborts; MPI_Abort from a second thread at
// the same time may return (Open MPI 4.1), so later ones wait for the abort to end the process.
std::atomic<bool> g_failing{false};

[[noreturn]] void fail_rank(MPI_Comm comm, int rank, int process, int thread, const char* what, int code) {
  // acq_rel: a single winner; nothing else is published through the flag.
  if (g_failing.exchange(true, std::memory_order_acq_rel)) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::fprintf(stderr, "postbox: error: rank %d (process %d, thread %d): %s\n", rank, process, thread, what);
  std::fflush(stderr);
  MPI_Abort(comm, code);
  std::abort();  // MPI_Abort does not return; if it did, this process must not go on
}

// Regions of one rank's buffers overlap.
bool overlap(const Region& x, const Region& y) {
  return x.buffer == y.buffer && x.bytes != 0 && y.bytes != 0 && x.offset < y.offset + y.bytes &&
         y.offset < x.offset + x.bytes;
}

}  // namespace

// What run() keeps per plan: the executor for this process's ranks, and per rank the staging
// of sends whose region is written again while they may be in flight, and the request slots.
struct Job::Prepared {
  std::shared_ptr<const Plan> plan;
  std::unique_ptr<PlanExecutor> exec;
  struct Rank {
    std::vector<std::int64_t> stage;  // per op j: offset in staging, or -1 (sent from its region)
    std::vector<std::byte> staging;
    std::vector<MPI_Request> requests;  // one per send to another process
  };
  std::vector<Rank> ranks;  // per thread
};

Job::Job(MPI_Comm comm, int threads, TeamOptions options) : threads_(threads), options_(std::move(options)) {
  int given[2] = {threads, -threads};
  int agreed[2] = {0, 0};
  MPI_Allreduce(given, agreed, 2, MPI_INT, MPI_MAX, comm);  // max of T and of −T: equal iff all agree
  if (agreed[0] != -agreed[1]) throw InputError("the processes were given different thread counts");
  if (threads < 1) throw InputError("threads per process must be at least 1, got " + std::to_string(threads));
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_size(comm_, &processes_);
  MPI_Comm_rank(comm_, &process_);
  void* attr = nullptr;
  int has = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &attr, &has);
  const long long tag_ub = has != 0 ? *static_cast<int*>(attr) : 32767;
  const long long pairs = static_cast<long long>(threads) * threads;
  if (pairs > tag_ub + 1) {
    MPI_Comm_free(&comm_);
    throw InputError(std::to_string(threads) + " threads per process need " + std::to_string(pairs) +
                     " MPI tags; this MPI has " + std::to_string(tag_ub + 1));
  }
  tag_cycle_ = static_cast<int>((tag_ub + 1) / pairs);

  // Nodes: the lowest process of each shared-memory group names it.
  const NodeShare share = node_share(comm_);
  const int leader = share.leader;
  const int on_node = share.processes;
  const int node_index = share.index;
  // Several processes on a node that all see its PUs (mpirun --bind-to none) would pin their
  // thread t to the same PU under the compact default: give each process its own run of PUs,
  // and pin nothing when the node has fewer PUs than threads (the scheduler then spreads them).
  if (on_node > 1 && options_.placement.policy == Placement::Policy::compact && options_.pin) {
    const Topology topo = options_.topology ? *options_.topology : Topology::machine();
    if (static_cast<long long>(topo.pus()) >= static_cast<long long>(on_node) * threads) {
      std::vector<int> pus(static_cast<std::size_t>(threads));
      for (int t = 0; t < threads; ++t) pus[static_cast<std::size_t>(t)] = node_index * threads + t;
      options_.placement = Placement::list(std::move(pus));
    } else {
      options_.pin = false;
    }
  }
  team_ = std::make_unique<Team>(threads, options_);
  oversubscribed_ = internal::node_oversubscribed(comm_, threads, static_cast<unsigned>(allowed_cpu_count()));
  std::vector<int> leaders(static_cast<std::size_t>(processes_));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm_);
  std::vector<int> node(leaders.size());
  std::vector<int> seen;
  for (std::size_t q = 0; q < leaders.size(); ++q) {
    auto it = std::find(seen.begin(), seen.end(), leaders[q]);
    node[q] = static_cast<int>(it - seen.begin());
    if (it == seen.end()) seen.push_back(leaders[q]);
  }
  const std::size_t t = static_cast<std::size_t>(threads);
  std::vector<std::uint8_t> mine(t * t);
  const auto& pu = team_->placement();
  for (std::size_t a = 0; a < t; ++a)
    for (std::size_t b = 0; b < t; ++b)
      mine[a * t + b] = static_cast<std::uint8_t>(team_->topology().distance(pu[a], pu[b]));
  std::vector<std::uint8_t> local(mine.size() * static_cast<std::size_t>(processes_));
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_UINT8_T, local.data(), static_cast<int>(mine.size()),
                MPI_UINT8_T, comm_);
  topology_ = std::make_unique<JobTopology>(processes_, threads, std::move(node), std::move(local));
}

Job::~Job() {
  prepared_.clear();
  team_.reset();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && finalized == 0) MPI_Comm_free(&comm_);
}

void Job::forget(const Plan& plan) { prepared_.erase(&plan); }

std::uint64_t Job::staging_bytes(const Plan& plan) const {
  const auto it = prepared_.find(&plan);
  if (it == prepared_.end()) return 0;
  std::uint64_t n = 0;
  for (const auto& r : it->second->ranks) n += r.staging.size();
  return n;
}

Job::Prepared& Job::prepare(const std::shared_ptr<const Plan>& plan, const ReduceFn* op) {
  PB_CHECK(plan != nullptr, "Job::run: null plan");
  if (const auto it = prepared_.find(plan.get()); it != prepared_.end() && it->second->plan == plan) {
    it->second->exec->check_op(op);
    return *it->second;
  }
  const std::string name = plan->op + "/" + plan->algo;
  if (plan->p != p()) {
    throw InputError(name + ": plan for p = " + std::to_string(plan->p) + " run on a job of " +
                     std::to_string(processes_) + " x " + std::to_string(threads_) + " ranks");
  }
  auto prep = std::make_unique<Prepared>();
  prep->plan = plan;
  prep->exec = std::make_unique<PlanExecutor>(plan, rank_of(0), threads_);
  prep->exec->check_op(op);
  for (int r = 0; r < plan->p; ++r) {
    for (const OpView o : plan->ops(r)) {
      if (o.code == OpCode::send && topology_->process_of(o.peer) != topology_->process_of(r) &&
          o.a.bytes > static_cast<std::uint64_t>(INT_MAX)) {
        throw InputError(name + ": a message of " + std::to_string(o.a.bytes) + " bytes between processes (MPI counts stop at " +
                         std::to_string(INT_MAX) + ")");
      }
    }
  }
  // Mailbox rings for the pairs inside this process; checked over the whole plan, which is
  // conservative (a send to another process never waits for room).
  const std::uint64_t ring = team_->mailboxes().options().ring_bytes;
  if (validate_rings(*plan, ring)) {
    TeamOptions bigger = options_;
    bigger.mailbox.ring_bytes = ring_bytes_needed(*plan);
    team_ = std::make_unique<Team>(threads_, bigger);
    options_ = bigger;
  }
  prep->ranks.resize(static_cast<std::size_t>(threads_));
  for (int t = 0; t < threads_; ++t) {
    auto& pr = prep->ranks[static_cast<std::size_t>(t)];
    const int r = rank_of(t);
    const RankOps ops = plan->ops(r);
    pr.stage.assign(ops.size(), -1);
    std::size_t sends = 0;
    std::uint64_t staged = 0;
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const OpView o = ops[j];
      if (o.code != OpCode::send || topology_->process_of(o.peer) == process_) continue;
      ++sends;
      // A later op that writes the region could change it while MPI still reads it.
      bool written = false;
      for (std::size_t k = j + 1; k < ops.size() && !written; ++k) {
        const OpView w = ops[k];
        written = w.code != OpCode::send && overlap(o.a, w.a);
      }
      if (written) {
        pr.stage[j] = static_cast<std::int64_t>(staged);
        staged += o.a.bytes;
      }
    }
    pr.staging.resize(staged);
    pr.requests.assign(sends, MPI_REQUEST_NULL);
  }
  auto& slot = prepared_[plan.get()];
  slot = std::move(prep);
  return *slot;
}

// One rank's transport: mailboxes inside the process, MPI between processes.
class Job::Wire final : public Transport {
 public:
  // ctx: the rank's team context; null for a rank run outside the team (T = 1), which has no
  // peer in its own process.
  Wire(Job& job, Prepared::Rank& rank, int thread, RankContext* ctx) : job_(job), rank_(rank), ctx_(ctx), thread_(thread) {}

  void send(const OpView& o, std::uint32_t j, std::span<const std::byte> bytes) override {
    const int proc = o.peer / job_.threads_;
    const int peer_thread = o.peer % job_.threads_;
    if (proc == job_.process_) {
      local().send(peer_thread, bytes);
      return;
    }
    const void* from = bytes.data();
    if (const std::int64_t at = rank_.stage[j]; at >= 0) {
      std::byte* staged = rank_.staging.data() + at;
      if (!bytes.empty()) std::memcpy(staged, bytes.data(), bytes.size());
      from = staged;
    }
    MPI_Isend(from, static_cast<int>(bytes.size()), MPI_BYTE, proc, tag(o.tag, thread_, peer_thread), job_.comm_,
              &rank_.requests[pending_++]);
  }

  std::size_t recv(const OpView& o, std::uint32_t, std::span<std::byte> into) override {
    const int proc = o.peer / job_.threads_;
    const int peer_thread = o.peer % job_.threads_;
    if (proc == job_.process_) return local().recv(peer_thread, into);
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Irecv(into.data(), static_cast<int>(into.size()), MPI_BYTE, proc, tag(o.tag, peer_thread, thread_), job_.comm_,
              &req);
    MPI_Status st;
    wait([&] {
      int done = 0;
      MPI_Test(&req, &done, &st);
      return done != 0;
    });
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    return static_cast<std::size_t>(count);
  }

  void finish() override {
    if (pending_ == 0) return;
    wait([&] {
      int done = 0;
      MPI_Testall(static_cast<int>(pending_), rank_.requests.data(), &done, MPI_STATUSES_IGNORE);
      return done != 0;
    });
    pending_ = 0;
  }

 private:
  RankContext& local() {
    PB_CHECK(ctx_ != nullptr, "Job: a message inside the process of a rank run outside the team");
    return *ctx_;
  }
  [[nodiscard]] int tag(std::uint32_t plan_tag, int from, int to) const {
    const std::uint64_t t = static_cast<std::uint64_t>(job_.threads_);
    return static_cast<int>(((plan_tag % static_cast<std::uint64_t>(job_.tag_cycle_)) * t + static_cast<std::uint64_t>(from)) * t +
                            static_cast<std::uint64_t>(to));
  }
  // Polls MPI (each test drives its progress); yields between polls only when the node is
  // oversubscribed (mpi_poll.hpp).
  template <class Done>
  void wait(Done&& done) {
    internal::MpiPoll poll(job_.oversubscribed_);
    while (!done()) poll.pause();
  }

  Job& job_;
  Prepared::Rank& rank_;
  RankContext* ctx_;
  int thread_;
  std::size_t pending_ = 0;
};

void Job::run(const std::shared_ptr<const Plan>& plan, std::span<const std::span<std::byte>> users, const ReduceFn* op) {
  if (users.size() != static_cast<std::size_t>(threads_)) {
    throw InputError("Job::run: " + std::to_string(users.size()) + " buffers for " + std::to_string(threads_) +
                     " threads");
  }
  Prepared& prep = prepare(plan, op);
  // T = 1: the rank runs right here. Every peer is in another process, so it needs no mailbox,
  // and handing it to the team's thread and waiting for it would put a second runnable thread
  // on the node for every run (two scheduler wake-ups per run; docs/cluster.md, "Measured").
  if (threads_ == 1) {
    run_rank(prep, 0, nullptr, users[0], op);
    return;
  }
  team_->run([&](RankContext& ctx) { run_rank(prep, ctx.rank(), &ctx, users[static_cast<std::size_t>(ctx.rank())], op); });
}

void Job::run_rank(Prepared& prep, int t, RankContext* ctx, std::span<std::byte> user, const ReduceFn* op) {
  try {
    Wire wire(*this, prep.ranks[static_cast<std::size_t>(t)], t, ctx);
    prep.exec->run_rank(rank_of(t), wire, user, op);
  } catch (const InputError& e) {
    fail_rank(comm_, rank_of(t), process_, t, e.what(), 2);
  } catch (const std::exception& e) {
    fail_rank(comm_, rank_of(t), process_, t, e.what(), 1);
  } catch (...) {
    fail_rank(comm_, rank_of(t), process_, t, "an exception that is not a std::exception", 1);
  }
}

void Job::barrier() const { MPI_Barrier(comm_); }

double Job::max_over_processes(double v) const {
  double out = v;
  MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, comm_);
  return out;
}

std::optional<Mismatch> Job::check(const Oracle& oracle, std::span<const std::span<std::byte>> users) const {
  PB_CHECK(users.size() == static_cast<std::size_t>(threads_), "Job::check: one buffer per thread");
  std::optional<Mismatch> mine;
  for (int t = 0; t < threads_ && !mine; ++t) mine = oracle.check(rank_of(t), users[static_cast<std::size_t>(t)]);
  const int my_rank = mine ? mine->rank : INT_MAX;
  int lowest = INT_MAX;
  MPI_Allreduce(&my_rank, &lowest, 1, MPI_INT, MPI_MIN, comm_);
  if (lowest == INT_MAX) return std::nullopt;
  // The process holding the lowest failing rank tells the others what it found.
  unsigned long long fields[3] = {0, 0, 0};
  if (mine && mine->rank == lowest) fields[0] = mine->byte, fields[1] = mine->want, fields[2] = mine->got;
  MPI_Bcast(fields, 3, MPI_UNSIGNED_LONG_LONG, topology_->process_of(lowest), comm_);
  return Mismatch{lowest, fields[0], static_cast<unsigned>(fields[1]), static_cast<unsigned>(fields[2])};
}

// ---- Agreement ---------------------------------------------------------------------------------

namespace {

std::uint64_t fnv(std::uint64_t h, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

template <class T>
std::uint64_t fnv_value(std::uint64_t h, const T& v) {
  return fnv(h, &v, sizeof v);
}

}  // namespace

std::uint64_t plan_fingerprint(const Plan& plan) {
  std::uint64_t h = 1469598103934665603ULL;
  h = fnv(h, plan.op.data(), plan.op.size());
  h = fnv_value(h, '|');
  h = fnv(h, plan.algo.data(), plan.algo.size());
  h = fnv_value(h, plan.p);
  h = fnv_value(h, plan.root);
  h = fnv_value(h, plan.bytes);
  h = fnv_value(h, plan.elem_bytes);
  h = fnv_value(h, plan.needs_commutative);
  for (std::uint64_t b : plan.user_bytes) h = fnv_value(h, b);
  for (std::uint64_t b : plan.scratch_bytes) h = fnv_value(h, b);
  for (int r = 0; r < plan.rank_count(); ++r) {
    h = fnv_value(h, static_cast<std::uint32_t>(plan.ops(r).size()));
    for (const OpView o : plan.ops(r)) {
      const std::uint64_t fields[] = {static_cast<std::uint64_t>(o.code), static_cast<std::uint64_t>(o.peer),
                                      static_cast<std::uint64_t>(o.a.buffer), o.a.offset, o.a.bytes,
                                      static_cast<std::uint64_t>(o.b.buffer), o.b.offset, o.b.bytes,
                                      static_cast<std::uint64_t>(o.src_first), o.deps.size()};
      h = fnv(h, fields, sizeof fields);
      for (std::uint32_t d : o.deps) h = fnv_value(h, d);
    }
  }
  return h;
}

std::optional<std::string> agree(MPI_Comm comm, const std::optional<std::string>& error, const std::string& fingerprint) {
  int process = 0, processes = 1;
  MPI_Comm_rank(comm, &process);
  MPI_Comm_size(comm, &processes);
  const int my_error = error ? process : INT_MAX;
  int first_error = INT_MAX;
  MPI_Allreduce(&my_error, &first_error, 1, MPI_INT, MPI_MIN, comm);
  if (first_error != INT_MAX) {
    unsigned long long n = process == first_error ? error->size() : 0;
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, first_error, comm);
    std::string text(static_cast<std::size_t>(n), '\0');
    if (process == first_error) text = *error;
    MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, first_error, comm);
    return processes > 1 ? "process " + std::to_string(first_error) + ": " + text : text;
  }
  unsigned long long h = fnv(1469598103934665603ULL, fingerprint.data(), fingerprint.size());
  unsigned long long first = h;
  MPI_Bcast(&first, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
  const int my_diff = h != first ? process : INT_MAX;
  int first_diff = INT_MAX;
  MPI_Allreduce(&my_diff, &first_diff, 1, MPI_INT, MPI_MIN, comm);
  if (first_diff == INT_MAX) return std::nullopt;
  return "the processes were given different arguments: process " + std::to_string(first_diff) +
         " differs from process 0";
}

std::shared_ptr<const HierLevels> job_hier_levels(int processes, int threads, const SendRecv& inter, const SendRecv& intra) {
  if (threads < 1) throw InputError("threads per process must be at least 1, got " + std::to_string(threads));
  const Topology& machine = Topology::machine();
  auto levels = std::make_shared<HierLevels>();
  levels->groups = cluster_groups(processes, threads, topology_groups(machine, machine.place(Placement::compact(), threads)));
  // Level 0 (the processes) takes inter; the levels inside a process the last, intra.
  levels->models = {inter, intra};
  return levels;
}

bool use_job_hier_levels(PlanRequest& req, int processes, int threads, std::string* inter_source) {
  if (req.algo != "hier" && req.algo.rfind("hier:", 0) != 0) return false;
  req.hier_levels = job_hier_levels(processes, threads, inter_latency(inter_source), model_of(req));
  return true;
}

}  // namespace postbox::cluster
