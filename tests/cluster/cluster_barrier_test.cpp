// The contract of cluster/barrier.hpp across processes, one case per guarantee sentence. Every
// process runs every case (one mpirun per P × T configuration); the processes share a counter
// area (an MPI shared-memory window: the tests run on one node) through which a case checks what
// no rank can see alone. A case that would hang when its guarantee is broken waits with a
// deadline instead and fails (a deadlock detector, not a timing assertion).
//
//   cluster_barrier_test T            all cases with T threads per process
//   cluster_barrier_test --abort-job  a rank throws inside run_threads: the job must end,
//                                     naming it (ctest matches the message)
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "postbox/cluster/barrier.hpp"
#include "postbox/cluster/mpi_env.hpp"
#include "postbox/runtime/check.hpp"

namespace pc = postbox::cluster;

namespace {

constexpr int kSlots = 4096;

struct Ctx {
  int P = 0, T = 0, process = 0, n = 0;
  std::uint64_t* shared = nullptr;  // kSlots words, zeroed before each case
  std::atomic_ref<std::uint64_t> at(int i) const { return std::atomic_ref<std::uint64_t>(shared[i]); }
  int rank(int t) const { return process * T + t; }
};

// Shared-area layout (word indices).
constexpr int kArrivals = 0;     // [0, 1024): arrivals per phase
constexpr int kFlags = 1024;     // [1024, 1088): flags
constexpr int kData = 2048;      // [2048, 4096): per-rank data (two buffers)

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void expect(bool ok, const std::string& what) {
  if (!ok) throw Failure(what);
}

// Waits until pred() holds; 60 s without it → Failure (the guarantee under test hangs).
template <class Pred>
void await(Pred&& pred, const std::string& what) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) throw Failure("waited 60 s for " + what);
    std::this_thread::yield();
  }
}

// Runs fn(t) on T threads; returns the first failure's text ("" when none).
std::string on_threads(int T, const std::function<void(int)>& fn) {
  std::mutex mu;
  std::string first;
  const auto body = [&](int t) {
    try {
      fn(t);
    } catch (const std::exception& e) {
      std::lock_guard lock(mu);
      if (first.empty()) first = "thread " + std::to_string(t) + ": " + e.what();
    }
  };
  std::vector<std::thread> others;
  for (int t = 1; t < T; ++t) others.emplace_back(body, t);
  body(0);
  for (auto& th : others) th.join();
  return first;
}

// G1: no thread leaves a phase before every participant of every process arrived. The late
// rank rotates, and it arrives after a pause, so an early leaver would see its arrival missing.
std::string g1_no_early_leave(Ctx& c) {
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  return on_threads(c.T, [&](int t) {
    for (int k = 0; k < 24; ++k) {
      if (c.rank(t) == k % c.n) std::this_thread::sleep_for(std::chrono::microseconds(300));
      c.at(kArrivals + k).fetch_add(1, std::memory_order_acq_rel);
      if (k % 2 == 0) {
        b.arrive_and_wait(t);
      } else {
        const auto tok = b.arrive(t);
        b.wait(t, tok);
      }
      const auto seen = c.at(kArrivals + k).load(std::memory_order_acquire);
      expect(seen == static_cast<std::uint64_t>(c.n), "phase " + std::to_string(k) + ": left after " +
                                                          std::to_string(seen) + " of " + std::to_string(c.n) + " arrivals");
    }
  });
}

// G2: arrive() returns while no thread of another process has arrived (process 0's threads
// arrive first; the last of them runs the intra completion step inside arrive()).
std::string g2_arrive_returns(Ctx& c) {
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  return on_threads(c.T, [&](int t) {
    if (c.process == 0) {
      const auto tok = b.arrive(t);
      c.at(kFlags + 0).fetch_add(1, std::memory_order_acq_rel);
      b.wait(t, tok);
    } else {
      await([&] { return c.at(kFlags + 0).load(std::memory_order_acquire) == static_cast<std::uint64_t>(c.T); },
            "process 0's arrive() calls to return");
      b.arrive_and_wait(t);
    }
  });
}

// G2 for arrive_and_drop, and drop: the last process's threads drop before any other thread
// arrives; the others then see participants() fall by T and phases complete without them.
std::string g2_drop_returns(Ctx& c) {
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  const int last = c.P - 1;
  return on_threads(c.T, [&](int t) {
    if (c.process == last) {
      b.arrive_and_drop(t);
      c.at(kFlags + 0).fetch_add(1, std::memory_order_acq_rel);
      return;
    }
    await([&] { return c.at(kFlags + 0).load(std::memory_order_acquire) == static_cast<std::uint64_t>(c.T); },
          "arrive_and_drop() calls to return");
    b.arrive_and_wait(t);
    const int want = c.n - c.T;
    expect(b.participants() == want, "participants() " + std::to_string(b.participants()) + " after a process dropped, want " +
                                         std::to_string(want));
    for (int k = 0; k < 4; ++k) {
      c.at(kArrivals + k).fetch_add(1, std::memory_order_acq_rel);
      b.arrive_and_wait(t);
      expect(c.at(kArrivals + k).load(std::memory_order_acquire) == static_cast<std::uint64_t>(want),
             "a phase after the drop completed early");
    }
  });
}

// G3: a thread in wait() leaves while every thread of another process arrived with arrive() and
// none has called wait() (that process's progress thread answers). Twice: the absent process
// is the last one, then process 0 (the root of the leaders' tree: completion on its progress
// thread).
std::string g3_wait_while_absent(Ctx& c) {
  int completions = 0;
  pc::ClusterBarrierOptions o;
  o.completion = [&] { ++completions; };
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T, o);
  std::string err = on_threads(c.T, [&](int t) {
    for (int round = 0; round < 2; ++round) {
      const int absent = round == 0 ? c.P - 1 : 0;
      const auto others = static_cast<std::uint64_t>((c.P - 1) * c.T);
      if (c.process == absent) {
        const auto tok = b.arrive(t);
        await([&] { return c.at(kFlags + round).load(std::memory_order_acquire) == others; },
              "the other processes to leave wait() while this one is absent");
        b.wait(t, tok);
      } else {
        b.arrive_and_wait(t);
        c.at(kFlags + round).fetch_add(1, std::memory_order_acq_rel);
      }
    }
  });
  if (err.empty() && b.process() == 0) expect(completions == 2, "completion ran " + std::to_string(completions) + " times in 2 phases");
  return err;
}

// G4: the completion function runs once per phase, in one process, after every arrival, before
// anyone leaves; not for a phase one participant has not reached.
std::string g4_completion(Ctx& c) {
  pc::ClusterBarrierOptions o;
  o.completion = [&c] {
    const std::uint64_t k = c.at(kFlags + 0).fetch_add(1, std::memory_order_acq_rel);
    if (c.at(kArrivals + static_cast<int>(k)).load(std::memory_order_acquire) != static_cast<std::uint64_t>(c.n)) {
      c.at(kFlags + 1).store(1, std::memory_order_release);  // ran before every arrival
    }
  };
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T, o);
  constexpr int kPhases = 12;
  return on_threads(c.T, [&](int t) {
    for (int k = 0; k < kPhases; ++k) {
      c.at(kArrivals + k).fetch_add(1, std::memory_order_acq_rel);
      if (k % 3 == 1) {
        const auto tok = b.arrive(t);
        b.wait(t, tok);
      } else {
        b.arrive_and_wait(t);
      }
      const auto runs = c.at(kFlags + 0).load(std::memory_order_acquire);
      expect(runs == static_cast<std::uint64_t>(k + 1), "after phase " + std::to_string(k) + " the completion ran " +
                                                            std::to_string(runs) + " times");
      expect(c.at(kFlags + 1).load(std::memory_order_acquire) == 0, "the completion ran before every arrival");
    }
    // Every rank but the last arrives; the last checks that no completion ran, then arrives.
    c.at(kArrivals + kPhases).fetch_add(1, std::memory_order_acq_rel);
    if (c.rank(t) == c.n - 1) {
      await([&] { return c.at(kArrivals + kPhases).load(std::memory_order_acquire) == static_cast<std::uint64_t>(c.n); },
            "the other arrivals");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      expect(c.at(kFlags + 0).load(std::memory_order_acquire) == kPhases,
             "the completion ran for a phase one participant had not reached");
    }
    b.arrive_and_wait(t);
  });
}

// Exceptions: the completion throws in phase 2: one thread (root process) gets it, every other
// participant of the job BarrierBroken, later calls BarrierBroken.
std::string exceptions_break_everywhere(Ctx& c) {
  pc::ClusterBarrierOptions o;
  int phase = 0;
  o.completion = [&phase] {
    if (++phase == 2) throw std::runtime_error("completion failed");
  };
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T, o);
  std::string err = on_threads(c.T, [&](int t) {
    b.arrive_and_wait(t);
    try {
      if (t % 2 == 0) {
        b.arrive_and_wait(t);
      } else {
        const auto tok = b.arrive(t);
        b.wait(t, tok);
      }
      throw Failure("the broken phase returned normally");
    } catch (const postbox::BarrierBroken&) {
      c.at(kFlags + 1).fetch_add(1, std::memory_order_acq_rel);
    } catch (const std::runtime_error& e) {
      if (dynamic_cast<const Failure*>(&e) != nullptr) throw;
      expect(std::string(e.what()) == "completion failed", std::string("unexpected exception: ") + e.what());
      c.at(kFlags + 0).fetch_add(1, std::memory_order_acq_rel);
    }
    try {
      b.arrive_and_wait(t);
      throw Failure("a call after the break returned normally");
    } catch (const postbox::BarrierBroken&) {
    }
  });
  if (!err.empty()) return err;
  MPI_Barrier(MPI_COMM_WORLD);
  if (c.process == 0) {
    expect(c.at(kFlags + 0).load() == 1, "the completion's exception reached " + std::to_string(c.at(kFlags + 0).load()) + " threads");
    expect(c.at(kFlags + 1).load() == static_cast<std::uint64_t>(c.n - 1), "BarrierBroken reached " +
                                                                               std::to_string(c.at(kFlags + 1).load()) + " threads");
  }
  return "";
}

// arrive_and_reduce: a non-commutative op (2×2 matrix product mod a prime) folded in global rank
// order over the callers only (even ranks), the same on every caller.
struct Mat {
  std::uint64_t a, b, c, d;
  bool operator==(const Mat&) const = default;
};
constexpr std::uint64_t kMod = 1'000'003;
Mat mul(const Mat& x, const Mat& y) {
  return Mat{(x.a * y.a + x.b * y.c) % kMod, (x.a * y.b + x.b * y.d) % kMod, (x.c * y.a + x.d * y.c) % kMod,
             (x.c * y.b + x.d * y.d) % kMod};
}
Mat mat_of(int rank, int k) { return Mat{static_cast<std::uint64_t>(rank + 2), static_cast<std::uint64_t>(k + 1), 1, 0}; }

std::string reduce_in_rank_order(Ctx& c) {
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  return on_threads(c.T, [&](int t) {
    const int g = c.rank(t);
    for (int k = 0; k < 6; ++k) {
      const bool all = k % 2 == 0;  // odd phases: only the even ranks reduce
      if (!all && g % 2 == 1) {
        b.arrive_and_wait(t);
        continue;
      }
      const Mat got = b.arrive_and_reduce(t, mat_of(g, k), [](const Mat& x, const Mat& y) { return mul(x, y); });
      Mat want = mat_of(0, k);
      for (int r = all ? 1 : 2; r < c.n; r += all ? 1 : 2) want = mul(want, mat_of(r, k));
      expect(got == want, "phase " + std::to_string(k) + ": the reduction differs from the rank-order product");
    }
  });
}

// arrive_and_reduce of 512-byte values: a dissemination round's message then exceeds the
// receive posted for it (kInlineBytes in barrier.cpp) and travels on its own tag, announced by
// an empty message; the sums must still be exact on every rank.
struct Big {
  std::array<std::uint64_t, 64> v;
};
std::string reduce_large_values(Ctx& c) {
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  return on_threads(c.T, [&](int t) {
    const int g = c.rank(t);
    for (int k = 0; k < 4; ++k) {
      Big mine{};
      for (std::size_t i = 0; i < mine.v.size(); ++i) mine.v[i] = static_cast<std::uint64_t>(g + 1) * (i + 1) + k;
      const Big got = b.arrive_and_reduce(t, mine, [](const Big& x, const Big& y) {
        Big z{};
        for (std::size_t i = 0; i < z.v.size(); ++i) z.v[i] = x.v[i] + y.v[i];
        return z;
      });
      const auto n = static_cast<std::uint64_t>(c.n);
      for (std::size_t i = 0; i < got.v.size(); ++i) {
        const std::uint64_t want = n * (n + 1) / 2 * (i + 1) + n * static_cast<std::uint64_t>(k);
        expect(got.v[i] == want, "phase " + std::to_string(k) + ": element " + std::to_string(i) + " is " +
                                     std::to_string(got.v[i]) + ", want " + std::to_string(want));
      }
    }
  });
}

// Memory ordering: what every rank wrote before arriving is visible to every rank after it
// leaves (two buffers by phase parity, so a write of phase k + 2 never races a read of k).
std::string memory_ordering(Ctx& c) {
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  return on_threads(c.T, [&](int t) {
    const int g = c.rank(t);
    for (int k = 0; k < 16; ++k) {
      const int buf = kData + (k % 2) * 1024;
      c.at(buf + g).store(static_cast<std::uint64_t>(k * 1000 + g), std::memory_order_relaxed);
      b.arrive_and_wait(t);
      for (int r = 0; r < c.n; ++r) {
        const auto v = c.at(buf + r).load(std::memory_order_relaxed);
        expect(v == static_cast<std::uint64_t>(k * 1000 + r), "phase " + std::to_string(k) + ": rank " + std::to_string(r) +
                                                                  "'s write is not visible");
      }
    }
  });
}

// Drop: rank g drops in phase g (g < n − 1), so whole processes leave the leaders' tree, process
// 0 (the root) first; participants() falls by one per phase and phases still wait for everyone
// left.
std::string drop_one_by_one(Ctx& c) {
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  return on_threads(c.T, [&](int t) {
    const int g = c.rank(t);
    for (int k = 0; k < c.n; ++k) {
      c.at(kArrivals + k).fetch_add(1, std::memory_order_acq_rel);
      if (k == g && g < c.n - 1) {
        b.arrive_and_drop(t);
        return;
      }
      b.arrive_and_wait(t);
      const auto want = static_cast<std::uint64_t>(c.n - k);
      expect(c.at(kArrivals + k).load(std::memory_order_acquire) == want, "phase " + std::to_string(k) + " completed early");
      expect(b.participants() == c.n - k - 1 || k == c.n - 1,
             "participants() " + std::to_string(b.participants()) + " after phase " + std::to_string(k));
    }
  });
}

// G5: phase counters near 2^64 wrap and the barrier keeps working.
std::string g5_wrap(Ctx& c) {
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  pc::internal::ClusterTesting::set_phase(b, std::numeric_limits<std::uint64_t>::max() - 3);
  return on_threads(c.T, [&](int t) {
    for (int k = 0; k < 8; ++k) {
      c.at(kArrivals + k).fetch_add(1, std::memory_order_acq_rel);
      b.arrive_and_wait(t);
      expect(c.at(kArrivals + k).load(std::memory_order_acquire) == static_cast<std::uint64_t>(c.n),
             "phase " + std::to_string(k) + " across the wrap completed early");
    }
  });
}

// Abort: waiting threads and later calls of this process throw Aborted (local: nothing crosses).
std::string abort_local(Ctx& c) {
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  std::atomic<int> inside{0};
  return on_threads(c.T, [&](int t) {
    if (t == 0) {
      await([&] { return inside.load() == c.T - 1; }, "the other threads to enter the barrier");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      b.abort();
    } else {
      inside.fetch_add(1);
      try {
        b.arrive_and_wait(t);
        throw Failure("a waiter returned normally after abort()");
      } catch (const postbox::Aborted&) {
      }
    }
    try {
      b.arrive_and_wait(t);
      throw Failure("a call after abort() returned normally");
    } catch (const postbox::Aborted&) {
    }
  });
}

// Bad arguments: T differing across processes, T = 0, an unknown intra barrier: InputError on
// every process, naming the problem. And reason() names the leaders' step: dissemination without
// a completion function, the trees with one.
std::string bad_arguments(Ctx& c) {
  const auto throws = [](const std::function<void()>& f, const std::string& needle) {
    try {
      f();
    } catch (const postbox::InputError& e) {
      expect(std::string(e.what()).find(needle) != std::string::npos, std::string("message without '") + needle + "': " + e.what());
      return;
    }
    throw Failure("no InputError for " + needle);
  };
  throws([&] { pc::ClusterBarrier b(MPI_COMM_WORLD, c.process == 0 ? c.T + 1 : c.T); }, "differ");
  throws([&] { pc::ClusterBarrier b(MPI_COMM_WORLD, 0); }, "at least 1");
  pc::ClusterBarrierOptions o;
  o.intra_algorithm = c.process == 0 ? "nope" : "default";
  throws([&] { pc::ClusterBarrier b(MPI_COMM_WORLD, c.T, o); }, "unknown");
  pc::ClusterBarrier b(MPI_COMM_WORLD, c.T);
  expect(b.size() == c.n && b.participants() == c.n && b.rank(0) == c.process * c.T, "size/participants/rank");
  expect(b.reason().find("leaders: dissemination") != std::string::npos,
         "without a completion function the leaders' step is not dissemination: " + b.reason());
  pc::ClusterBarrierOptions with;
  with.completion = [] {};
  pc::ClusterBarrier t(MPI_COMM_WORLD, c.T, with);
  expect(t.reason().find("leaders: binomial arrival, Fibo wake-up") != std::string::npos,
         "with a completion function the leaders' step is not the trees: " + t.reason());
  return "";
}

int abort_job_case(int argc, char** argv) {
  pc::MpiEnvironment env(&argc, &argv);
  pc::ClusterBarrier b(MPI_COMM_WORLD, 2);
  pc::run_threads(b, [&](int t) {
    if (b.process() == 1 && t == 1) throw std::runtime_error("deliberate failure");
    b.arrive_and_wait(t);  // the others wait for a rank that will never arrive
  });
  std::fprintf(stderr, "the job was not ended\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--abort-job") == 0) return abort_job_case(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: cluster_barrier_test THREADS | --abort-job\n");
    return 2;
  }
  const int T = std::atoi(argv[1]);
  pc::MpiEnvironment env(&argc, &argv);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  if (node_size != env.size()) {
    if (env.rank() == 0) std::fprintf(stderr, "cluster_barrier_test needs every process on one node\n");
    return 1;
  }
  MPI_Win win = MPI_WIN_NULL;
  std::uint64_t* base = nullptr;
  MPI_Win_allocate_shared(env.rank() == 0 ? kSlots * 8 : 0, 8, MPI_INFO_NULL, node, &base, &win);
  MPI_Aint sz = 0;
  int du = 0;
  MPI_Win_shared_query(win, 0, &sz, &du, &base);
  Ctx c{env.size(), T, env.rank(), env.size() * T, base};

  const std::vector<std::pair<const char*, std::string (*)(Ctx&)>> cases = {
      {"g1_no_early_leave", g1_no_early_leave},
      {"g2_arrive_returns", g2_arrive_returns},
      {"g2_drop_returns", g2_drop_returns},
      {"g3_wait_while_absent", g3_wait_while_absent},
      {"g4_completion", g4_completion},
      {"exceptions_break_everywhere", exceptions_break_everywhere},
      {"reduce_in_rank_order", reduce_in_rank_order},
      {"reduce_large_values", reduce_large_values},
      {"memory_ordering", memory_ordering},
      {"drop_one_by_one", drop_one_by_one},
      {"g5_wrap", g5_wrap},
      {"abort_local", abort_local},
      {"bad_arguments", bad_arguments},
  };
  int failed = 0;
  for (const auto& [name, fn] : cases) {
    if (env.rank() == 0) std::memset(base, 0, kSlots * 8);
    MPI_Barrier(MPI_COMM_WORLD);
    std::string err;
    try {
      err = fn(c);
    } catch (const std::exception& e) {
      err = e.what();
    }
    if (!err.empty()) {
      std::fprintf(stderr, "FAIL %s (P=%d T=%d, process %d): %s\n", name, c.P, T, c.process, err.c_str());
      ++failed;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int total = 0;
  MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (env.rank() == 0) std::printf("%zu cases, P=%d T=%d: %d failures\n", cases.size(), c.P, T, total);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  return total == 0 ? 0 : 1;
}
