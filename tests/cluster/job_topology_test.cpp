// cluster::JobTopology's levels and plan_fingerprint(), without MPI (job.hpp).
#include <gtest/gtest.h>

#include <vector>

#include "postbox/cluster/job.hpp"
#include "postbox/collectives/plans.hpp"

namespace postbox::cluster {
namespace {

// 2 nodes x 2 processes x 2 threads: the two threads of every process share a core (1), except
// process 3's, which share only the package (4).
JobTopology two_nodes() {
  std::vector<std::uint8_t> local(16, Topology::kSamePu);  // [q][a][b], 2 x 2 per process
  for (int q = 0; q < 4; ++q) {
    const int apart = q == 3 ? Topology::kSamePackage : Topology::kSameCore;
    local[static_cast<std::size_t>(4 * q + 1)] = static_cast<std::uint8_t>(apart);
    local[static_cast<std::size_t>(4 * q + 2)] = static_cast<std::uint8_t>(apart);
  }
  return JobTopology(4, 2, {0, 0, 1, 1}, local);
}

TEST(JobTopology, RanksAreProcessMajor) {
  const JobTopology t = two_nodes();
  EXPECT_EQ(t.p(), 8);
  EXPECT_EQ(t.nodes(), 2);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(t.process_of(r), r / 2);
    EXPECT_EQ(t.thread_of(r), r % 2);
    EXPECT_EQ(t.node_of(r), r / 4);
  }
}

TEST(JobTopology, ProcessesAreFartherThanAnyLevelInsideOne) {
  const JobTopology t = two_nodes();
  EXPECT_EQ(t.distance(0, 0), Topology::kSamePu);
  EXPECT_EQ(t.distance(0, 1), Topology::kSameCore);
  EXPECT_EQ(t.distance(6, 7), Topology::kSamePackage);
  EXPECT_EQ(t.distance(1, 2), JobTopology::kSameNode);  // processes 0 and 1, node 0
  EXPECT_EQ(t.distance(5, 6), JobTopology::kSameNode);  // processes 2 and 3, node 1
  EXPECT_EQ(t.distance(3, 4), JobTopology::kJob);       // nodes 0 and 1
  EXPECT_GT(JobTopology::kSameNode, Topology::kMachine);
  EXPECT_GT(JobTopology::kJob, JobTopology::kSameNode);
  // "distance <= k" partitions the ranks for every k: transitive.
  for (int k = 0; k <= JobTopology::kJob; ++k)
    for (int a = 0; a < 8; ++a)
      for (int b = 0; b < 8; ++b)
        for (int c = 0; c < 8; ++c)
          if (t.distance(a, b) <= k && t.distance(b, c) <= k) {
            EXPECT_LE(t.distance(a, c), k) << a << b << c;
          }
}

TEST(JobTopologyDeathTest, RanksOutsideTheJobFailFast) {
  const JobTopology t = two_nodes();
  EXPECT_DEATH((void)t.distance(0, 8), "outside the job");
  EXPECT_DEATH((void)t.node_of(-1), "outside the job");
}

TEST(PlanFingerprint, SamePlanSameFingerprintAnyChangeAnother) {
  PlanRequest req;
  req.op = "allreduce";
  req.algo = "recursive-doubling";
  req.p = 6;
  req.bytes = 64;
  req.elem_bytes = 8;
  const Plan a = build_plan(req), b = build_plan(req);
  EXPECT_EQ(plan_fingerprint(a), plan_fingerprint(b));
  req.bytes = 72;
  EXPECT_NE(plan_fingerprint(a), plan_fingerprint(build_plan(req)));
  req.bytes = 64;
  req.algo = "reduce-bcast";
  EXPECT_NE(plan_fingerprint(a), plan_fingerprint(build_plan(req)));
  // One op's peer changed: a different plan.
  std::vector<RankProgram> progs = a.programs();
  Plan c = a;
  for (auto& op : progs[0].ops)
    if (op.code == OpCode::send) {
      op.a.offset ^= 8;
      break;
    }
  c.set_programs(progs);
  EXPECT_NE(plan_fingerprint(a), plan_fingerprint(c));
}

}  // namespace
}  // namespace postbox::cluster
