// Built against an install tree (when postbox was built with MPI) by tests/install_consumer.cmake
// and run under mpirun: a job of the MPI processes x 2 threads runs an allreduce plan 3 times on
// one cluster::Job and checks every rank's result against the oracle.
#include <cstdio>
#include <span>
#include <vector>

#include "postbox/cluster/job.hpp"
#include "postbox/cluster/mpi_env.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/verify.hpp"

int main(int argc, char** argv) {
  postbox::cluster::MpiEnvironment env(&argc, &argv);
  postbox::cluster::Job job(MPI_COMM_WORLD, 2);
  postbox::PlanRequest req;
  req.op = "allreduce";
  req.algo = "postal";
  req.p = job.p();
  req.bytes = 64;
  req.elem_bytes = 8;
  const auto plan = postbox::cached_plan(req);
  const postbox::Oracle oracle(req);
  std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(64));
  std::vector<std::span<std::byte>> users(bufs.begin(), bufs.end());
  for (int run = 0; run < 3; ++run) {
    for (int t = 0; t < 2; ++t) oracle.fill(job.rank_of(t), users[static_cast<std::size_t>(t)]);
    job.run(plan, users, oracle.reduce());
    if (const auto bad = job.check(oracle, users)) {
      if (job.process() == 0) std::printf("cluster: %s\n", bad->str().c_str());
      return 1;
    }
  }
  if (job.process() == 0) std::printf("cluster: p = %d (%d x 2), allreduce verified 3 times\n", job.p(), job.processes());
  return 0;
}
