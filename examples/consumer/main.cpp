// Built against an install tree by tests/install_consumer.cmake: four threads meet at a
// postbox::Barrier, and a reduction checks that every phase saw every thread.
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "postbox/barrier/barrier.hpp"
#include "postbox/barrier/version.hpp"

int main() {
  constexpr int p = 4;
  constexpr int phases = 1000;
  postbox::Barrier barrier(p);
  std::vector<long> sums(p, 0);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < p; ++rank) {
    threads.emplace_back([&, rank] {
      for (int i = 0; i < phases; ++i) sums[rank] += barrier.arrive_and_reduce(rank, long{rank + i}, std::plus<long>{});
    });
  }
  for (auto& t : threads) t.join();
  // Phase i reduces 0+1+2+3 + 4i.
  const long expected = phases * 6L + 4L * (phases * (phases - 1) / 2);
  for (int rank = 0; rank < p; ++rank) {
    if (sums[rank] != expected) {
      std::printf("rank %d: %ld, expected %ld\n", rank, sums[rank], expected);
      return 1;
    }
  }
  std::printf("postbox %s: %d threads, %d barrier phases via %s\n", postbox::version(), p, phases,
              barrier.algorithm());
  return 0;
}
