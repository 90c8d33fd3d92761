// A job: P MPI processes × T threads, one rank per thread, plans run unchanged across them
// (docs/cluster.md).
//
// Ranks: global rank = process · T + thread (process-major), process = the rank in the job's
// communicator, thread = the rank in this process's Team. Every process runs a Team of T ranks
// as a thread run does (TeamOptions: placement, pinning, rings), with one exception for the
// default (compact, pinned) options when k > 1 processes share a node: if the process's
// topology has at least k·T PUs, process i of the node places its threads on PUs i·T .. i·T+T−1
// (so the processes do not all pin thread t to PU t); otherwise nothing is pinned. With T = 1
// the one rank runs on the thread calling run() instead (see run()), whose affinity is left alone.
//
// Topology: JobTopology extends Topology's distance scale (kSamePu .. kMachine, inside one
// process) with two levels above it: kSameNode for ranks in different processes on one node
// (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): processes that can share memory) and kJob for
// ranks on different nodes. Ranks in different processes are farther apart than any pair inside
// one process, and "distance(a, b) <= k" stays an equivalence relation for every k.
//
// Messages: a plan's send and recv between two ranks of one process go through the Team's
// mailboxes; between processes through MPI nonblocking point-to-point on the job's own
// communicator (a duplicate of the one given, so no other traffic matches), with tag
// (plan tag mod M)·T² + sender thread·T + receiver thread, M = ⌊(MPI_TAG_UB + 1) / T²⌋. A send
// goes straight from its region (no copy) unless a later op of the same rank writes that region
// while the send may still be in flight; those sends are copied once into staging laid out when
// the plan is first run (so a send never waits for its receiver, and the run cannot deadlock
// where validate() says the plan cannot). A receive lands straight in its region. Before run()
// returns at a rank, every send it started has completed.
//
// Failure: a rank that throws (an exception from the reduce operator, a user buffer smaller than
// the plan's) prints "postbox: error: rank R (process P, thread T): WHAT" on stderr and calls
// MPI_Abort on the job's communicator (error code 2 for an InputError, else 1): the whole job
// ends, no process waits forever for a message that will not come.
//
// Requirements: the constructor, run() and the destructor are collective over the communicator
// (every process calls them in the same order with the same plan); one run at a time per job;
// MPI initialised with MPI_THREAD_MULTIPLE (MpiEnvironment), since every rank thread calls MPI.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/tree.hpp"
#include "postbox/collectives/verify.hpp"
#include "postbox/runtime/executor.hpp"
#include "postbox/runtime/plan.hpp"
#include "postbox/runtime/team.hpp"
#include "postbox/runtime/topology.hpp"

namespace postbox::cluster {

class JobTopology {
 public:
  // Different processes on one node (they share memory: MPI_COMM_TYPE_SHARED).
  static constexpr int kSameNode = Topology::kMachine + 1;
  // Different nodes.
  static constexpr int kJob = Topology::kMachine + 2;

  // local[(process · T + a) · T + b]: Topology::distance of threads a and b of that process;
  // node[process]: the node index (0..nodes-1, numbered in order of each node's first process).
  JobTopology(int processes, int threads, std::vector<int> node, std::vector<std::uint8_t> local);

  [[nodiscard]] int p() const noexcept { return processes_ * threads_; }
  [[nodiscard]] int processes() const noexcept { return processes_; }
  [[nodiscard]] int threads() const noexcept { return threads_; }
  [[nodiscard]] int nodes() const noexcept { return nodes_; }
  [[nodiscard]] int process_of(int rank) const { return rank / threads_; }
  [[nodiscard]] int thread_of(int rank) const { return rank % threads_; }
  [[nodiscard]] int node_of(int rank) const;
  // kSamePu .. kMachine inside a process (its Topology::distance of the two threads' PUs),
  // kSameNode, kJob. Ranks outside 0..p()-1 → PB_CHECK.
  [[nodiscard]] int distance(int a, int b) const;

 private:
  int processes_;
  int threads_;
  int nodes_ = 0;
  std::vector<int> node_;
  std::vector<std::uint8_t> local_;
};

class Job {
 public:
  // Collective over comm. threads < 1, or processes passing different thread counts →
  // InputError on every process; T² more than MPI_TAG_UB + 1 → InputError (no tag room).
  Job(MPI_Comm comm, int threads, TeamOptions options = {});
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  [[nodiscard]] int processes() const noexcept { return processes_; }
  [[nodiscard]] int process() const noexcept { return process_; }
  [[nodiscard]] int threads() const noexcept { return threads_; }
  [[nodiscard]] int p() const noexcept { return processes_ * threads_; }
  // The global rank of this process's thread t: process() · threads() + t.
  [[nodiscard]] int rank_of(int thread) const noexcept { return process_ * threads_ + thread; }
  [[nodiscard]] const JobTopology& topology() const noexcept { return *topology_; }
  // This process's Team. run() replaces it by one with larger rings when a plan needs them, so
  // hold the reference only between runs.
  [[nodiscard]] Team& team() noexcept { return *team_; }
  // The job's own communicator (a duplicate of the constructor's).
  [[nodiscard]] MPI_Comm comm() const noexcept { return comm_; }

  // Runs plan (plan.p == p()) with this process's thread t working on users[t] as rank
  // rank_of(t); returns once this process's ranks have finished. With T = 1 the one rank runs
  // on the thread that calls run() (no hand-off to the team's thread: it has no peer in its
  // process); with T > 1 rank_of(t) runs on the team's thread t. The first run of a plan
  // prepares it (executor with scratch for this process's ranks, staging, request slots; a
  // larger Team when the plan needs larger mailbox rings than the Team has); later runs of the
  // same plan object reuse that, with no allocation. Collective. InputError, alike on every
  // process, before anything runs: plan.p != p(), users.size() != threads(), the executor's
  // operator checks (PlanExecutor::check_op), a message between processes over INT_MAX bytes.
  void run(const std::shared_ptr<const Plan>& plan, std::span<const std::span<std::byte>> users, const ReduceFn* op);

  // Drops what run() prepared for plan (if anything).
  void forget(const Plan& plan);
  // Bytes of staging run() laid out for plan at this process's ranks: the sum of the sends to
  // other processes whose region a later op of the same rank writes (0 before the first run).
  [[nodiscard]] std::uint64_t staging_bytes(const Plan& plan) const;

  // Collective helpers for drivers (the CLI, benchmarks) on the job's communicator.
  void barrier() const;
  [[nodiscard]] double max_over_processes(double v) const;

  // The oracle's check of every rank's buffer (users[t] holds rank rank_of(t)'s), agreed across
  // the processes: the mismatch of the lowest failing rank, the same on every process, or
  // nullopt when every rank of the job holds the op's result. Collective.
  [[nodiscard]] std::optional<Mismatch> check(const Oracle& oracle, std::span<const std::span<std::byte>> users) const;

 private:
  struct Prepared;
  class Wire;
  Prepared& prepare(const std::shared_ptr<const Plan>& plan, const ReduceFn* op);
  // Thread t's rank of prep's plan; ctx null when it runs outside the team (T = 1).
  void run_rank(Prepared& prep, int t, RankContext* ctx, std::span<std::byte> user, const ReduceFn* op);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int processes_ = 1;
  int process_ = 0;
  int threads_ = 1;
  int tag_cycle_ = 1;  // M above
  // The threads of this node's processes outnumber its CPUs: a rank waiting for MPI yields
  // between polls (else it spins, as Open MPI's own waits do).
  bool oversubscribed_ = false;
  TeamOptions options_;
  std::unique_ptr<Team> team_;
  std::unique_ptr<JobTopology> topology_;
  std::map<const Plan*, std::unique_ptr<Prepared>> prepared_;
};

// Collective over comm: the arguments of a command run by every process agree. Each process
// passes its own outcome: `error` (a one-line message) when its arguments were refused, and
// `fingerprint` (its normalised arguments; compared through a 64-bit hash). nullopt when no
// process had an error and every fingerprint is the same; else the message, the same on every
// process: the error of the lowest process that had one ("process K: MESSAGE" when there are
// several processes), or "the processes were given different arguments: process K differs from
// process 0".
std::optional<std::string> agree(MPI_Comm comm, const std::optional<std::string>& error, const std::string& fingerprint);

// hier across a job of `processes` × `threads` ranks (Cordsen §3 with per-level
// latencies): level 0 the process (cluster_groups), its tree among the processes' leaders built
// from `inter`; below it the topology classes (topology_groups) of `threads` ranks placed
// compactly on this process's machine topology, the same inside every process, built from
// `intra`. So every message between processes goes between two processes' leaders (a class's
// leader is the root for the root's process, else its thread 0). Bad counts → InputError.
std::shared_ptr<const HierLevels> job_hier_levels(int processes, int threads, const SendRecv& inter, const SendRecv& intra);

// Where req asks for hier (bcast "hier[:...]", barrier "hier"): sets req.hier_levels to
// job_hier_levels(processes, threads, inter_latency(), model_of(req)), so the inter figures are
// the calibration's "inter" (postbox calibrate --mpi --save), else s = r = 1 us, and the intra
// ones the request's (its --s and --r or --lambda, else model_of()'s default). Returns whether it
// did; `inter_source` (when not null) says where the inter figures came from.
bool use_job_hier_levels(PlanRequest& req, int processes, int threads, std::string* inter_source = nullptr);

// A 64-bit hash of everything a plan runs (header fields, every op of every rank, buffer sizes):
// two processes with the same fingerprint run the same plan.
std::uint64_t plan_fingerprint(const Plan& plan);

}  // namespace postbox::cluster
