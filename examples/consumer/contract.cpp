// Two barrier-contract programs, built against an install tree (tests/install_consumer.cmake) for
// every barrier name and p in {2, 5, 8}, the way a user calls the library:
//  * split phase: rank 0 calls arrive(), then waits for a condition that ranks 1..p-1 set only
//    after they left the phase, then wait(). Under std::barrier's contract the others leave
//    while rank 0 works; a barrier that needs rank 0 to complete or to wake them hangs (the
//    ctest that runs this program has a timeout).
//  * abort: rank 0 arrive()s, rank 1 waits in arrive_and_reduce, rank 2 never comes; abort().
//    No completion or reduction may run for that phase, rank 1 and wait(0) throw Aborted.
#include <atomic>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "postbox/barrier/barrier.hpp"

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAILED: %s\n", what.c_str());
    ++failures;
  }
}

void split_phase(const std::string& name, int p) {
  auto b = postbox::make_barrier(name, p);
  std::atomic<int> left{0};
  std::vector<std::thread> others;
  postbox::BarrierToken t = b->arrive(0);
  for (int r = 1; r < p; ++r) {
    others.emplace_back([&, r] {
      b->arrive_and_wait(r);
      left.fetch_add(1);
    });
  }
  while (left.load() < p - 1) std::this_thread::yield();  // hangs if the others cannot leave
  b->wait(0, t);
  for (auto& th : others) th.join();
}

void abort_unreached(const std::string& name, int p) {
  std::atomic<int> completions{0}, folds{0}, aborted{0};
  postbox::BarrierOptions o;
  o.completion = [&] { completions.fetch_add(1); };
  auto b = postbox::make_barrier(name, p, o);
  postbox::BarrierToken t = b->arrive(0);
  std::atomic<bool> inside{false};
  std::thread reducer([&] {
    try {
      inside.store(true);
      (void)b->arrive_and_reduce(1, 1, [&](int x, int y) {
        folds.fetch_add(1);
        return x + y;
      });
    } catch (const postbox::Aborted&) {
      aborted.fetch_add(1);
    }
  });
  while (!inside.load()) std::this_thread::yield();
  for (int i = 0; i < 100; ++i) std::this_thread::yield();
  b->abort();
  try {
    b->wait(0, t);
    check(false, name + " p=" + std::to_string(p) + ": wait(0) returned after abort()");
  } catch (const postbox::Aborted&) {
    aborted.fetch_add(1);
  }
  reducer.join();
  check(completions.load() == 0, name + " p=" + std::to_string(p) + ": the completion ran for an unreached phase");
  check(folds.load() == 0, name + " p=" + std::to_string(p) + ": the reduction ran for an unreached phase");
  check(aborted.load() == 2, name + " p=" + std::to_string(p) + ": not every caller threw Aborted");
}

}  // namespace

int main() {
  int cases = 0;
  for (const std::string& name : postbox::barrier_names()) {
    for (int p : {2, 5, 8}) {
      split_phase(name, p);
      if (p >= 3) abort_unreached(name, p);
      ++cases;
    }
  }
  if (failures != 0) return 1;
  std::printf("contract: split phase and abort hold for %d barrier configurations\n", cases);
  return 0;
}
