// Plans run unchanged across processes, under mpirun with P processes:
//   postbox_cluster_plans_test T
// For every op and algorithm of the registry (postbox run --list; parameterised families with
// their listed or a typical parameter), the plan for p = P·T ranks is run twice on one
// cluster::Job (the second run reuses what the first prepared) and every rank's buffer is checked
// against the op's oracle after each run (barriers: the runs return). A request the plan
// selection refuses for this p (a power-of-two algorithm at p = 6) is refused alike without MPI,
// so it is listed and skipped; at least one plan per op must run. Also checked: the job's rank
// numbering and topology levels, and that sends are staged exactly where a later op overwrites
// their region (bcast/binomial: none; allreduce/recursive-doubling: some, once P > 1), and that
// hier plans built with use_job_hier_levels send between processes only leader to leader, and
// where the ranks run (T = 1: on run()'s caller; T > 1: on the team's threads).
// Exit 0 when everything holds; 1 naming the first failure (process 0 prints).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "algos.hpp"
#include "postbox/cluster/job.hpp"
#include "postbox/cluster/mpi_env.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/collectives/verify.hpp"
#include "postbox/runtime/check.hpp"

namespace pc = postbox::cluster;
using postbox::InputError;

namespace {

int g_failures = 0;
int g_process = 0;

void fail(const std::string& what) {
  ++g_failures;
  std::fprintf(stderr, "process %d: FAIL %s\n", g_process, what.c_str());
}


// Runs one request twice and checks every rank after each run; false when the selection
// refused it.
void run_request(pc::Job& job, const std::string& name, const postbox::PlanRequest& req,
                 const std::shared_ptr<const postbox::Plan>& plan);

bool run_one(pc::Job& job, std::map<std::string, std::string> given) {
  const std::string name = given["op"] + "/" + given["algo"] + " bytes " + given["bytes"];
  postbox::PlanRequest req;
  std::shared_ptr<const postbox::Plan> plan;
  try {
    req = postbox::select_plan(given);
    plan = postbox::cached_plan(req);
  } catch (const InputError&) {
    return false;
  }
  run_request(job, name, req, plan);
  return true;
}

void run_request(pc::Job& job, const std::string& name, const postbox::PlanRequest& req,
                 const std::shared_ptr<const postbox::Plan>& plan) {
  const bool verify = postbox::Oracle::knows(req.op);
  std::optional<postbox::Oracle> oracle;
  if (verify) oracle.emplace(req);
  std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(job.threads()));
  std::vector<std::span<std::byte>> users;
  for (int t = 0; t < job.threads(); ++t) {
    bufs[static_cast<std::size_t>(t)].resize(plan->user_bytes[static_cast<std::size_t>(job.rank_of(t))]);
    users.emplace_back(bufs[static_cast<std::size_t>(t)]);
  }
  const postbox::ReduceFn sum = postbox::unsigned_sum(plan->elem_bytes);
  for (int run = 0; run < 2; ++run) {
    if (oracle)
      for (int t = 0; t < job.threads(); ++t) oracle->fill(job.rank_of(t), users[static_cast<std::size_t>(t)]);
    job.run(plan, users, &sum);
    if (oracle) {
      if (const auto bad = job.check(*oracle, users)) fail(name + " run " + std::to_string(run + 1) + ": " + bad->str());
    }
  }
  // The job's team has rings the plan can run on (it grows them where the plan needs more).
  if (postbox::validate_rings(*plan, job.team().mailboxes().options().ring_bytes)) fail(name + ": rings too small");
  job.forget(*plan);
}

// hier across processes (use_job_hier_levels, what postbox run --algo hier does under mpirun):
// the top level of the plan's tree groups the ranks by process, so every message between
// processes goes between two processes' leaders (the root for the root's process, else thread
// 0): P - 1 of them for a bcast, 2(P - 1) for a barrier; and the plan runs verified.
void check_job_hier(pc::Job& job, const std::string& op, const std::string& algo, int root) {
  const int P = job.processes(), T = job.threads(), p = job.p();
  std::map<std::string, std::string> given{{"op", op}, {"algo", algo}, {"p", std::to_string(p)}};
  given["bytes"] = op == "barrier" ? "0" : "24";
  if (postbox::op_has_root(op)) given["root"] = std::to_string(root);
  const std::string name = op + "/" + algo + " across processes (root " + std::to_string(root) + ")";
  postbox::PlanRequest req = postbox::select_plan(given);
  if (!pc::use_job_hier_levels(req, P, T)) fail(name + ": use_job_hier_levels did not take hier");
  const auto plan = postbox::cached_plan(req);
  const int root_rank = op == "barrier" ? 0 : root;
  const auto leader = [&](int process) { return process == root_rank / T ? root_rank : process * T; };
  int crossing = 0;
  for (int r = 0; r < p; ++r) {
    for (const postbox::OpView o : plan->ops(r)) {
      if (o.code != postbox::OpCode::send || o.peer / T == r / T) continue;
      ++crossing;
      if (r != leader(r / T) || o.peer != leader(o.peer / T))
        fail(name + ": rank " + std::to_string(r) + " sends to rank " + std::to_string(o.peer) + " in another process, not leader to leader");
    }
  }
  const int expected = (op == "barrier" ? 2 : 1) * (P - 1);
  if (crossing != expected)
    fail(name + ": " + std::to_string(crossing) + " messages between processes, expected " + std::to_string(expected));
  run_request(job, name, req, plan);
}

}  // namespace

int main(int argc, char** argv) {
  pc::MpiEnvironment env(&argc, &argv);
  g_process = env.rank();
  if (argc != 2) {
    std::fprintf(stderr, "usage: postbox_cluster_plans_test T\n");
    return 2;
  }
  const int threads = std::atoi(argv[1]);
  pc::Job job(MPI_COMM_WORLD, threads);
  const int p = job.p();

  // Numbering and levels.
  if (job.processes() != env.size() || job.process() != env.rank()) fail("processes and process differ from MPI's");
  for (int t = 0; t < threads; ++t)
    if (job.rank_of(t) != env.rank() * threads + t) fail("rank_of is not process-major");
  const pc::JobTopology& topo = job.topology();
  for (int a = 0; a < p; ++a) {
    if (topo.process_of(a) != a / threads || topo.thread_of(a) != a % threads) fail("process_of/thread_of");
    for (int b = 0; b < p; ++b) {
      const int d = topo.distance(a, b);
      const bool same = a / threads == b / threads;
      // mpirun in the tests starts every process on this host: one node.
      if (same ? d > postbox::Topology::kMachine : d != pc::JobTopology::kSameNode)
        fail("distance(" + std::to_string(a) + ", " + std::to_string(b) + ") = " + std::to_string(d));
      if (d != topo.distance(b, a)) fail("distance is not symmetric");
    }
  }
  if (topo.nodes() != 1) fail("one host, " + std::to_string(topo.nodes()) + " nodes");
  // Placement with several processes on the node (all of them, here): a run of PUs each, or no
  // pinning where the process sees fewer than processes x T PUs.
  if (job.processes() > 1) {
    const int pus = postbox::Topology::machine().pus();
    if (pus >= job.processes() * threads) {
      for (int t = 0; t < threads; ++t)
        if (job.team().placement()[static_cast<std::size_t>(t)] != job.process() * threads + t) fail("placement");
    } else if (job.team().pinned()) {
      fail("pinned although " + std::to_string(pus) + " PUs < processes x T");
    }
  }

  // Staging: only where a later op overwrites the region of a send to another process.
  {
    const auto bcast = postbox::cached_plan(postbox::select_plan({{"op", "bcast"}, {"algo", "binomial"}, {"p", std::to_string(p)}, {"bytes", "64"}}));
    const auto rd = postbox::cached_plan(
        postbox::select_plan({{"op", "allreduce"}, {"algo", "recursive-doubling"}, {"p", std::to_string(p)}, {"bytes", "64"}}));
    std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(threads), std::vector<std::byte>(64 * static_cast<std::size_t>(p)));
    std::vector<std::span<std::byte>> users(bufs.begin(), bufs.end());
    const postbox::ReduceFn sum = postbox::unsigned_sum(8);
    job.run(bcast, users, &sum);
    job.run(rd, users, &sum);
    const double staged_bcast = job.max_over_processes(static_cast<double>(job.staging_bytes(*bcast)));
    const double staged_rd = job.max_over_processes(static_cast<double>(job.staging_bytes(*rd)));
    if (staged_bcast != 0) fail("bcast/binomial staged " + std::to_string(staged_bcast) + " bytes (forwards only)");
    if (job.processes() > 1 && staged_rd == 0) fail("allreduce/recursive-doubling staged nothing, yet overwrites what it sent");
  }

  // Where the ranks run (Job::run): with T = 1 on the thread calling run(), with T > 1 on the
  // team's threads. Every rank of allreduce/recursive-doubling applies the operator, which
  // records the threads it ran on.
  {
    struct Seen {
      std::mutex mu;
      std::set<std::thread::id> threads;
    } seen;
    postbox::ReduceFn recording = postbox::unsigned_sum(8);
    const postbox::ReduceFn sum8 = recording;
    struct State {
      postbox::ReduceFn sum;
      Seen* seen;
    } state{sum8, &seen};
    recording.state = &state;
    recording.fn = [](const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void* st) {
      const auto* s = static_cast<const State*>(st);
      {
        std::lock_guard lock(s->seen->mu);
        s->seen->threads.insert(std::this_thread::get_id());
      }
      s->sum.fn(x, y, out, count, s->sum.state);
    };
    const auto rd = postbox::cached_plan(
        postbox::select_plan({{"op", "allreduce"}, {"algo", "recursive-doubling"}, {"p", std::to_string(p)}, {"bytes", "64"}}));
    std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(threads), std::vector<std::byte>(64));
    std::vector<std::span<std::byte>> users(bufs.begin(), bufs.end());
    job.run(rd, users, &recording);
    // (At p not a power of two some ranks only send and receive: count the processes that saw any.)
    const bool on_caller = seen.threads.count(std::this_thread::get_id()) != 0;
    const std::size_t others = seen.threads.size() - (on_caller ? 1 : 0);
    if (threads == 1 && others != 0) fail("T = 1: the rank ran on a thread other than run()'s caller");
    if (threads > 1 && on_caller) fail("T > 1: a rank ran on run()'s caller");
    if (job.max_over_processes(static_cast<double>(seen.threads.size())) == 0) fail("no rank applied the operator");
    job.forget(*rd);
  }

  check_job_hier(job, "bcast", "hier", 0);
  check_job_hier(job, "bcast", "hier:fibo", p - 1);
  check_job_hier(job, "barrier", "hier", 0);

  std::map<std::string, int> ran_per_op;
  std::set<std::string> ops;
  std::vector<std::string> refused;
  int ran = 0;
  for (const auto& b : postbox::list_plan_builders()) {
    ops.insert(b.op);
    for (const std::string& algo : postbox::test::concrete_algos(b.algo)) {
      std::map<std::string, std::string> given{{"op", b.op}, {"algo", algo}, {"p", std::to_string(p)}};
      given["bytes"] = b.op == "barrier" ? "0" : "24";
      if (postbox::op_has_root(b.op)) given["root"] = std::to_string(p - 1);
      if (b.op == "s2p") given["sources"] = std::to_string((p + 1) / 2);
      if (run_one(job, given)) {
        ++ran, ++ran_per_op[b.op];
      } else {
        refused.push_back(b.op + "/" + algo);
      }
    }
  }
  // Messages past the mailbox rings and MPI's eager limit (rendezvous; the job's team grows).
  for (const char* algo : {"binomial", "fibo"}) {
    if (!run_one(job, {{"op", "bcast"}, {"algo", algo}, {"p", std::to_string(p)}, {"bytes", "100000"}, {"root", "0"}}))
      fail(std::string("bcast/") + algo + " 100000 bytes refused");
  }
  for (const char* algo : {"postal", "recursive-doubling", "reduce-bcast"}) {
    if (!run_one(job, {{"op", "allreduce"}, {"algo", algo}, {"p", std::to_string(p)}, {"bytes", "100000"}}))
      fail(std::string("allreduce/") + algo + " 100000 bytes refused");
  }
  for (const auto& op : ops)
    if (ran_per_op[op] == 0) fail("no plan of " + op + " ran at p = " + std::to_string(p));

  int failures = g_failures, total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (env.rank() == 0) {
    std::printf("p = %d (%d x %d): %d plans verified on every rank, %zu refused by the selection at this p:", p,
                job.processes(), threads, ran, refused.size());
    for (const auto& r : refused) std::printf(" %s", r.c_str());
    std::printf("\n%s\n", total == 0 ? "ok" : "FAILED");
  }
  return total == 0 ? 0 : 1;
}
