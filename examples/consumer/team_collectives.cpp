// Built against an install tree by tests/install_consumer.cmake: collectives on a Team. Four
// ranks run SPMD inside team.run(): rank 0 broadcasts a vector, then every rank adds its rank
// into an allreduce; each rank checks what it got.
#include <atomic>
#include <cstdio>
#include <functional>
#include <span>
#include <vector>

#include "postbox/collectives/ops.hpp"
#include "postbox/runtime/team.hpp"

int main() {
  constexpr int p = 4;
  postbox::Team team(p);
  std::atomic<int> wrong{0};
  team.run([&](postbox::RankContext& ctx) {
    std::vector<int> data(3, ctx.rank() == 0 ? 42 : 0);
    postbox::broadcast(ctx, /*root=*/0, std::span<int>(data));
    for (int v : data) wrong += v != 42;

    std::vector<long> sum{ctx.rank()};
    postbox::allreduce(ctx, std::span<long>(sum), std::plus<long>{});
    wrong += sum[0] != 0 + 1 + 2 + 3;
  });
  std::printf("collectives: broadcast and allreduce on a team of %d: %s\n", p, wrong == 0 ? "right" : "WRONG");
  return wrong == 0 ? 0 : 1;
}
