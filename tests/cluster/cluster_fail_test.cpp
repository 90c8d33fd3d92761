// A rank that throws ends the whole job (cluster/job.hpp, "Failure"), under mpirun:
//   postbox_cluster_fail_test T short-buffer   the last rank's buffer is one byte short
//                                              (InputError inside the run): exit 2
//   postbox_cluster_fail_test T operator       the reduce operator throws on process 1: exit 1
// Either way the failing rank prints one line naming it and calls MPI_Abort; the other ranks are
// waiting for its messages, so without the abort the job would hang (ctest's timeout).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "postbox/cluster/job.hpp"
#include "postbox/cluster/mpi_env.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/collectives/verify.hpp"

namespace {

int g_process = 0;

void throwing_sum(const std::byte*, const std::byte*, std::byte*, std::size_t, const void*) {
  if (g_process == 1) throw std::runtime_error("the operator refused");
}

}  // namespace

int main(int argc, char** argv) {
  postbox::cluster::MpiEnvironment env(&argc, &argv);
  g_process = env.rank();
  if (argc != 3) return 2;
  const int threads = std::atoi(argv[1]);
  const bool short_buffer = std::strcmp(argv[2], "short-buffer") == 0;
  postbox::cluster::Job job(MPI_COMM_WORLD, threads);
  const auto plan = postbox::cached_plan(postbox::select_plan(
      {{"op", "allreduce"}, {"algo", "recursive-doubling"}, {"p", std::to_string(job.p())}, {"bytes", "64"}}));
  std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(threads), std::vector<std::byte>(64));
  if (short_buffer && job.process() == job.processes() - 1) bufs.back().resize(63);
  std::vector<std::span<std::byte>> users(bufs.begin(), bufs.end());
  const postbox::ReduceFn sum = short_buffer ? postbox::unsigned_sum(8) : postbox::ReduceFn{&throwing_sum, nullptr, 8, true};
  job.run(plan, users, &sum);
  std::fprintf(stderr, "process %d: the run returned\n", job.process());
  return 0;
}
