// cluster::Collectives (cluster/allreduce.hpp) under mpirun with P processes:
//   postbox_cluster_allreduce_test T
// Every case runs on T threads per process, each calling run() with its own buffer, and checks
// every element of every thread's buffer against the fold computed here from every rank's input:
//  * both algorithms, forced (rabenseifner_min_bytes 0 and SIZE_MAX) and chosen by size, with the
//    default fragments, with 24-byte fragments of every message up to 4 KiB and with none, at
//    element counts 0, 1, 2, 3, 5, 7, 8, 13, 64, 100, 1023, 4097 and 100003 (fewer elements
//    than processes × threads, counts no power of two divides), with 8-byte and 1-byte
//    unsigned sums;
//  * Rabenseifner's algorithm split across the threads and on thread 0 (splits() says which);
//  * global rank order: an associative operator that is not commutative (composition of affine
//    maps mod 2^32), whose result changes if any two neighbouring ranks swap;
//  * 300 calls back to back alternating the two algorithms on one object (a thread that left
//    early, or a message of one call matched by the next, gives a wrong sum);
//  * algorithm(bytes) at the threshold;
//  * refusals: sizes that differ between the threads of a process, a size that is not a whole
//    number of elements: InputError in every thread, and the object still works afterwards.
//  * bcast, reduce (sum and the non-commutative fold) and gather from every root, at 0, 1, 13,
//    4097 and 100003 bytes (reduce: elements), with 4000-byte and 24-byte fragments;
//  * refusals of the rooted operations: a root outside the job, roots that differ between the
//    threads, a gather root's buffer too small (refused at the root's process; in the ring by
//    the root's thread);
//  * 400 calls of bcast, reduce, gather and allreduce back to back on the same threads (no join
//    between calls), the root rotating, sizes alternating between the staged path and the other;
//  * the ring of small rooted calls (T > 1): a thread that nobody waits for runs kRingDepth
//    calls ahead of the others (bcast's leader; reduce's and gather's other threads), its next
//    call waits for them, and it may scribble over its buffer once a call returned; 600 calls
//    of bcast, reduce (the non-commutative fold) and gather back to back, every root in turn
//    (consecutive calls with different leaders), sizes 8 B to staged_up_to, a thread of each
//    process now and then 2 ms late; the ring's refusals (the thread that waits refuses);
//  * barrier: a rotating rank arrives 20 ms late and no thread leaves before it arrived; 200
//    barriers back to back.
// Exit 0 when everything holds; 1 naming the first failure.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "postbox/cluster/collectives.hpp"
#include "postbox/cluster/mpi_env.hpp"
#include "postbox/collectives/verify.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/runtime/topology.hpp"

namespace pc = postbox::cluster;

namespace {

int g_failures = 0;
int g_process = 0;
std::mutex g_mu;

void fail(const std::string& what) {
  const std::lock_guard lock(g_mu);
  ++g_failures;
  if (g_failures <= 10) std::fprintf(stderr, "process %d: FAIL %s\n", g_process, what.c_str());
}

std::uint64_t input(int rank, std::size_t i) { return (static_cast<std::uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ULL + i * 1000003ULL; }

// An affine map x -> a·x + b mod 2^32 as one 8-byte element; x ⊕ y = y ∘ x (apply x first).
struct Affine {
  std::uint32_t a, b;
};
Affine compose(Affine x, Affine y) { return {y.a * x.a, y.a * x.b + y.b}; }
void affine_fn(const std::byte* x, const std::byte* y, std::byte* out, std::size_t count, const void*) {
  for (std::size_t i = 0; i < count; ++i) {
    Affine u, v;
    std::memcpy(&u, x + i * 8, 8);
    std::memcpy(&v, y + i * 8, 8);
    const Affine w = compose(u, v);
    std::memcpy(out + i * 8, &w, 8);
  }
}
Affine affine_input(int rank, std::size_t i) {
  return {static_cast<std::uint32_t>(2 * (rank * 31 + i) + 3), static_cast<std::uint32_t>(rank * 1000 + i + 1)};
}

// Runs fn(thread) on T threads of this process.
template <class Fn>
void on_threads(int threads, Fn fn) {
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t) others.emplace_back(fn, t);
  fn(0);
  for (auto& th : others) th.join();
}

void fill(std::vector<std::byte>& buf, int rank, std::uint32_t elem) {
  for (std::size_t i = 0; i < buf.size() / elem; ++i) {
    const std::uint64_t v = input(rank, i);
    std::memcpy(buf.data() + i * elem, &v, elem);  // little-endian low bytes
  }
}

bool check_sum(const std::vector<std::byte>& buf, int p, std::uint32_t elem, const std::string& name, int rank) {
  for (std::size_t i = 0; i < buf.size() / elem; ++i) {
    std::uint64_t want = 0;
    for (int r = 0; r < p; ++r) want += input(r, i);
    if (elem < 8) want &= (std::uint64_t{1} << (8 * elem)) - 1;
    std::uint64_t got = 0;
    std::memcpy(&got, buf.data() + i * elem, elem);
    if (got != want) {
      fail(name + ": rank " + std::to_string(rank) + " element " + std::to_string(i) + ": expected " + std::to_string(want) +
           ", got " + std::to_string(got));
      return false;
    }
  }
  return true;
}

// One allreduce of `count` elements of `elem` bytes on ar, checked on every thread.
void sum_case(pc::Collectives& ar, std::size_t count, std::uint32_t elem, const std::string& name) {
  const int T = ar.threads(), p = ar.processes() * T;
  const postbox::ReduceFn op = postbox::unsigned_sum(elem);
  on_threads(T, [&](int t) {
    const int rank = ar.process() * T + t;
    std::vector<std::byte> buf(count * elem);
    fill(buf, rank, elem);
    ar.allreduce(t, buf, op);
    check_sum(buf, p, elem, name + " count " + std::to_string(count) + " elem " + std::to_string(elem), rank);
  });
}

void order_case(pc::Collectives& ar, std::size_t count, const std::string& name) {
  const int T = ar.threads(), p = ar.processes() * T;
  const postbox::ReduceFn op{&affine_fn, nullptr, 8, false};
  on_threads(T, [&](int t) {
    const int rank = ar.process() * T + t;
    std::vector<std::byte> buf(count * 8);
    for (std::size_t i = 0; i < count; ++i) {
      const Affine v = affine_input(rank, i);
      std::memcpy(buf.data() + i * 8, &v, 8);
    }
    ar.allreduce(t, buf, op);
    for (std::size_t i = 0; i < count; ++i) {
      Affine want = affine_input(0, i);
      for (int r = 1; r < p; ++r) want = compose(want, affine_input(r, i));
      Affine got;
      std::memcpy(&got, buf.data() + i * 8, 8);
      if (got.a != want.a || got.b != want.b) {
        fail(name + " (non-commutative) count " + std::to_string(count) + ": rank " + std::to_string(rank) +
             " element " + std::to_string(i) + " is not the fold in rank order");
        return;
      }
    }
  });
}

std::byte pattern(int rank, std::size_t i) { return static_cast<std::byte>((rank * 37 + i * 11 + 5) & 0xff); }

// bcast from every root: every thread's buffer holds the root's bytes.
void bcast_case(pc::Collectives& c, std::size_t bytes) {
  const int T = c.threads(), p = c.processes() * T;
  for (int root = 0; root < p; ++root) {
    on_threads(T, [&](int t) {
      const int rank = c.process() * T + t;
      std::vector<std::byte> buf(bytes, std::byte{0xee});
      if (rank == root)
        for (std::size_t i = 0; i < bytes; ++i) buf[i] = pattern(root, i);
      c.bcast(t, buf, root);
      for (std::size_t i = 0; i < bytes; ++i) {
        if (buf[i] != pattern(root, i)) {
          fail("bcast " + std::to_string(bytes) + " B root " + std::to_string(root) + ": rank " + std::to_string(rank) +
               " byte " + std::to_string(i));
          return;
        }
      }
    });
  }
}

// reduce to every root, with the 8-byte sum and the non-commutative affine fold.
void reduce_case(pc::Collectives& c, std::size_t count) {
  const int T = c.threads(), p = c.processes() * T;
  const postbox::ReduceFn sum = postbox::unsigned_sum(8);
  const postbox::ReduceFn affine{&affine_fn, nullptr, 8, false};
  for (int root = 0; root < p; ++root) {
    on_threads(T, [&](int t) {
      const int rank = c.process() * T + t;
      std::vector<std::byte> buf(count * 8);
      fill(buf, rank, 8);
      c.reduce(t, buf, root, sum);
      if (rank == root) check_sum(buf, p, 8, "reduce root " + std::to_string(root) + " count " + std::to_string(count), rank);
      for (std::size_t i = 0; i < count; ++i) {
        const Affine v = affine_input(rank, i);
        std::memcpy(buf.data() + i * 8, &v, 8);
      }
      c.reduce(t, buf, root, affine);
      if (rank != root) return;
      for (std::size_t i = 0; i < count; ++i) {
        Affine want = affine_input(0, i);
        for (int r = 1; r < p; ++r) want = compose(want, affine_input(r, i));
        Affine got;
        std::memcpy(&got, buf.data() + i * 8, 8);
        if (got.a != want.a || got.b != want.b) {
          fail("reduce (non-commutative) root " + std::to_string(root) + " count " + std::to_string(count) +
               ": not the fold in rank order");
          return;
        }
      }
    });
  }
}

// gather to every root: rank r's block at offset r·bytes of the root's buffer.
void gather_case(pc::Collectives& c, std::size_t bytes) {
  const int T = c.threads(), p = c.processes() * T;
  for (int root = 0; root < p; ++root) {
    on_threads(T, [&](int t) {
      const int rank = c.process() * T + t;
      std::vector<std::byte> block(bytes);
      for (std::size_t i = 0; i < bytes; ++i) block[i] = pattern(rank, i);
      std::vector<std::byte> out(rank == root ? bytes * static_cast<std::size_t>(p) : 0, std::byte{0xee});
      c.gather(t, block, out, root);
      for (std::size_t i = 0; i < bytes; ++i)
        if (block[i] != pattern(rank, i)) return fail("gather changed rank " + std::to_string(rank) + "'s block");
      if (rank != root) return;
      for (int r = 0; r < p; ++r) {
        for (std::size_t i = 0; i < bytes; ++i) {
          if (out[static_cast<std::size_t>(r) * bytes + i] != pattern(r, i)) {
            fail("gather " + std::to_string(bytes) + " B root " + std::to_string(root) + ": block of rank " +
                 std::to_string(r) + " byte " + std::to_string(i));
            return;
          }
        }
      }
    });
  }
}

}  // namespace

int main(int argc, char** argv) {
  pc::MpiEnvironment env(&argc, &argv);
  g_process = env.rank();
  if (argc != 2) {
    std::fprintf(stderr, "usage: postbox_cluster_allreduce_test T\n");
    return 2;
  }
  const int threads = std::atoi(argv[1]);
  const std::size_t counts[] = {0, 1, 2, 3, 5, 7, 8, 13, 64, 100, 1023, 4097, 100003};
  struct Variant {
    const char* name;
    std::size_t min_bytes;
    std::size_t fragment_bytes = pc::CollectivesOptions{}.fragment_bytes;
    std::size_t fragment_up_to = pc::CollectivesOptions{}.fragment_up_to;
    pc::AllreduceNodeLevel node_level = pc::AllreduceNodeLevel::automatic;
  };
  constexpr std::size_t kNever = std::numeric_limits<std::size_t>::max();
  const Variant variants[] = {{"recursive-doubling", kNever},
                              {"rabenseifner", 0},
                              {"by size", pc::kRabenseifnerMinBytes},
                              {"recursive-doubling, 24-byte fragments", kNever, 24, 4096},
                              {"rabenseifner, 24-byte fragments", 0, 24, 4096},
                              {"rabenseifner, whole messages", 0, 0, 0},
                              {"rabenseifner, split across threads", 0, 4000, 32768, pc::AllreduceNodeLevel::split},
                              {"rabenseifner, on thread 0", 0, 4000, 32768, pc::AllreduceNodeLevel::leader}};
  for (const Variant& v : variants) {
    pc::Collectives ar(MPI_COMM_WORLD, threads, pc::CollectivesOptions{v.min_bytes, v.fragment_bytes, v.fragment_up_to, v.node_level});
    if (ar.processes() != env.size() || ar.process() != env.rank() || ar.threads() != threads) fail("numbering");
    if (v.node_level != pc::AllreduceNodeLevel::automatic &&
        ar.splits() != (threads > 1 && v.node_level == pc::AllreduceNodeLevel::split))
      fail(std::string(v.name) + ": splits() is " + (ar.splits() ? "true" : "false"));
    // automatic: split exactly where the node's threads fit its CPUs.
    const bool fits = static_cast<long long>(pc::processes_on_node(MPI_COMM_WORLD)) * threads <= postbox::allowed_cpu_count();
    if (v.node_level == pc::AllreduceNodeLevel::automatic && ar.splits() != (threads > 1 && fits))
      fail(std::string(v.name) + ": automatic splits() is " + (ar.splits() ? "true" : "false"));
    for (const std::size_t count : counts) {
      sum_case(ar, count, 8, v.name);
      sum_case(ar, count, 1, v.name);
      order_case(ar, count, v.name);
    }
  }

  // The choice by size.
  {
    pc::Collectives ar(MPI_COMM_WORLD, threads);
    if (ar.algorithm(pc::kRabenseifnerMinBytes - 1) != pc::AllreduceAlgorithm::recursive_doubling ||
        ar.algorithm(pc::kRabenseifnerMinBytes) != pc::AllreduceAlgorithm::rabenseifner)
      fail("algorithm(bytes) does not switch at kRabenseifnerMinBytes");
    if (std::string(pc::to_string(pc::AllreduceAlgorithm::rabenseifner)) != "rabenseifner" ||
        std::string(pc::to_string(pc::AllreduceAlgorithm::recursive_doubling)) != "recursive-doubling")
      fail("to_string");

    // Back to back, alternating algorithms, checked after every call.
    for (int i = 0; i < 300; ++i) sum_case(ar, i % 2 == 0 ? 3 : 3000, 8, "back to back " + std::to_string(i));

    // Refusals: every thread throws, and the object goes on working.
    const postbox::ReduceFn op = postbox::unsigned_sum(8);
    std::vector<int> refused(static_cast<std::size_t>(threads), 0);
    on_threads(threads, [&](int t) {
      std::vector<std::byte> buf(threads > 1 && t == 1 ? 16 : 24);
      try {
        ar.allreduce(t, buf, op);
      } catch (const postbox::InputError& e) {
        refused[static_cast<std::size_t>(t)] = std::string(e.what()).find("thread 1 gave 16 bytes, thread 0 gave 24") != std::string::npos;
      }
    });
    if (threads > 1)
      for (int t = 0; t < threads; ++t)
        if (refused[static_cast<std::size_t>(t)] == 0) fail("differing sizes: thread " + std::to_string(t) + " not refused");
    if (threads == 1 && refused[0] != 0) fail("one thread: refused although nothing differs");
    on_threads(threads, [&](int t) {
      std::vector<std::byte> buf(12);
      try {
        ar.allreduce(t, buf, op);
        fail("12 bytes of 8-byte elements: not refused");
      } catch (const postbox::InputError& e) {
        if (std::string(e.what()).find("12 bytes are not a whole number of 8-byte elements") == std::string::npos)
          fail(std::string("12 bytes: wrong message: ") + e.what());
      }
    });
    sum_case(ar, 1000, 8, "after the refusals");
  }

  // bcast, reduce and gather from every root, with and without fragments.
  for (const std::size_t fragment : {std::size_t{4000}, std::size_t{24}}) {
    pc::Collectives c(MPI_COMM_WORLD, threads, pc::CollectivesOptions{pc::kRabenseifnerMinBytes, fragment, 4096});
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{4097}, std::size_t{100003}}) {
      bcast_case(c, n);
      gather_case(c, n);
      if (n < 100003) reduce_case(c, n);
    }
  }
  // Refusals of the rooted operations, in every thread, and the object goes on working.
  {
    pc::Collectives c(MPI_COMM_WORLD, threads);
    const int p = env.size() * threads;
    const auto refused = [&](const std::string& name, const std::string& message, auto call) {
      std::vector<int> ok(static_cast<std::size_t>(threads), 0);
      on_threads(threads, [&](int t) {
        try {
          call(t);
        } catch (const postbox::InputError& e) {
          ok[static_cast<std::size_t>(t)] = std::string(e.what()).find(message) != std::string::npos;
          if (ok[static_cast<std::size_t>(t)] == 0) fail(name + ": wrong message: " + e.what());
          return;
        }
        fail(name + ": not refused");
      });
    };
    std::vector<std::vector<std::byte>> bufs(static_cast<std::size_t>(threads), std::vector<std::byte>(16));
    refused("root outside", "bcast: root " + std::to_string(p) + " is outside 0.." + std::to_string(p - 1),
            [&](int t) { c.bcast(t, bufs[static_cast<std::size_t>(t)], p); });
    if (threads > 1) {
      // Sizes above staged_up_to: every thread checks every thread's root.
      std::vector<std::vector<std::byte>> big(static_cast<std::size_t>(threads), std::vector<std::byte>(4096));
      refused("roots differ", "reduce: thread 1 gave root 1, thread 0 gave root 0",
              [&](int t) { c.reduce(t, big[static_cast<std::size_t>(t)], t == 1 ? 1 : 0, postbox::unsigned_sum(8)); });
      // The ring: the thread that waits for the others refuses. reduce: thread 0 (every
      // process's leader for root 0) refuses; thread 1 returns, except in process 0, where root 1
      // makes it a leader too.
      on_threads(threads, [&](int t) {
        const std::string who = "ring roots differ: thread " + std::to_string(t);
        try {
          c.reduce(t, bufs[static_cast<std::size_t>(t)], t == 1 ? 1 : 0, postbox::unsigned_sum(8));
          if (t == 0 || (t == 1 && env.rank() == 0)) fail(who + " not refused");
        } catch (const postbox::InputError& e) {
          const std::string want = t == 0 ? "reduce: thread 1 gave root 1, thread 0 gave root 0"
                                          : "reduce: thread 0 gave root 0, thread 1 gave root 1";
          if (t == 1 && env.rank() != 0) fail(who + " refused although it waits for nobody");
          else if (std::string(e.what()).find(want) == std::string::npos) fail(who + ": wrong message: " + e.what());
        }
      });
      // bcast: thread 1 gives 24 bytes, the leader (thread 0) 16: thread 1 refuses, thread 0 returns.
      on_threads(threads, [&](int t) {
        std::vector<std::byte> buf(t == 1 ? 24 : 16);
        const std::string who = "ring sizes differ: thread " + std::to_string(t);
        try {
          c.bcast(t, buf, 0);
          if (t == 1) fail(who + " not refused");
        } catch (const postbox::InputError& e) {
          if (t != 1) fail(who + " refused although it waits for nobody");
          else if (std::string(e.what()).find("bcast: thread 1 gave 24 bytes, thread 0 gave 16") == std::string::npos)
            fail(who + ": wrong message: " + e.what());
        }
      });
    }
    // gather: thread 1 gives a 24-byte block, the leader (thread 0) 16: thread 0 refuses before
    // any message, thread 1 returns.
    if (threads > 1) {
      on_threads(threads, [&](int t) {
        std::vector<std::byte> block(t == 1 ? 24 : 16), out(env.rank() == 0 && t == 0 ? 24 * static_cast<std::size_t>(p) : 0);
        const std::string who = "ring gather sizes differ: thread " + std::to_string(t);
        try {
          c.gather(t, block, out, 0);
          if (t == 0) fail(who + " not refused");
        } catch (const postbox::InputError& e) {
          if (t != 0) fail(who + " refused although it waits for nobody");
          else if (std::string(e.what()).find("gather: thread 1 gave 24 bytes, thread 0 gave 16") == std::string::npos)
            fail(who + ": wrong message: " + e.what());
        }
      });
    }
    refused("ring: partial element", "reduce: 12 bytes are not a whole number of 8-byte elements",
            [&](int t) {
              std::vector<std::byte> b12(12);
              c.reduce(t, b12, 0, postbox::unsigned_sum(8));
            });
    bcast_case(c, 100);
    bcast_case(c, 4096);
    reduce_case(c, 3);
    gather_case(c, 5);
  }
  // 400 calls back to back on the same threads (no join between calls, so a thread may be a call
  // ahead of another): bcast, reduce, gather and allreduce in turn, the root rotating, sizes
  // alternating between the staged path (at most staged_up_to) and the other; each result checked.
  {
    pc::Collectives c(MPI_COMM_WORLD, threads);
    const int p = env.size() * threads;
    const postbox::ReduceFn sum = postbox::unsigned_sum(8);
    on_threads(threads, [&](int t) {
      const int rank = env.rank() * threads + t;
      for (int i = 0; i < 400; ++i) {
        const int root = (i / 4) % p;
        const std::size_t count = (i / 4) % 2 == 0 ? 3 : 700;  // 24 B staged, 5600 B not
        std::vector<std::byte> buf(count * 8);
        const std::string name = "back to back call " + std::to_string(i);
        switch (i % 4) {
          case 0: {
            for (std::size_t k = 0; k < buf.size(); ++k) buf[k] = rank == root ? pattern(root + i, k) : std::byte{0xee};
            c.bcast(t, buf, root);
            for (std::size_t k = 0; k < buf.size(); ++k)
              if (buf[k] != pattern(root + i, k)) return fail(name + " (bcast): rank " + std::to_string(rank));
            break;
          }
          case 1:
            fill(buf, rank, 8);
            c.reduce(t, buf, root, sum);
            if (rank == root) check_sum(buf, p, 8, name + " (reduce)", rank);
            break;
          case 2: {
            for (std::size_t k = 0; k < buf.size(); ++k) buf[k] = pattern(rank + i, k);
            std::vector<std::byte> out(rank == root ? buf.size() * static_cast<std::size_t>(p) : 0);
            c.gather(t, buf, out, root);
            if (rank == root) {
              for (int r = 0; r < p; ++r)
                for (std::size_t k = 0; k < buf.size(); ++k)
                  if (out[static_cast<std::size_t>(r) * buf.size() + k] != pattern(r + i, k))
                    return fail(name + " (gather): block of rank " + std::to_string(r));
            }
            break;
          }
          default:
            fill(buf, rank, 8);
            c.allreduce(t, buf, sum);
            check_sum(buf, p, 8, name + " (allreduce)", rank);
        }
      }
    });
  }
  // The ring of small rooted calls (T > 1): a thread that gives nothing another thread waits for
  // leaves without waiting, up to kRingDepth calls ahead. Each phase below deadlocks (and ctest's
  // timeout fails it) if a thread that should run ahead waits for one that has not started.
  if (threads > 1) {
    pc::Collectives c(MPI_COMM_WORLD, threads);
    const int p = env.size() * threads;
    const int depth = static_cast<int>(pc::kRingDepth);
    const postbox::ReduceFn affine{&affine_fn, nullptr, 8, false};
    const auto affine_want = [&](int call, std::size_t k) {
      Affine want = affine_input(100 * call, k);
      for (int r = 1; r < p; ++r) want = compose(want, affine_input(r + 100 * call, k));
      return want;
    };
    const auto set_affine = [](std::vector<std::byte>& buf, int rank, int call) {
      for (std::size_t k = 0; k < buf.size() / 8; ++k) {
        const Affine v = affine_input(rank + 100 * call, k);
        std::memcpy(buf.data() + k * 8, &v, 8);
      }
    };
    const auto check_affine = [&](const std::vector<std::byte>& buf, int call, const std::string& name) {
      for (std::size_t k = 0; k < buf.size() / 8; ++k) {
        Affine got;
        std::memcpy(&got, buf.data() + k * 8, 8);
        const Affine want = affine_want(call, k);
        if (got.a != want.a || got.b != want.b) return fail(name + ": not the fold in rank order");
      }
    };
    // bcast from rank 0: thread 0, every process's leader, makes kRingDepth calls before the
    // other threads start theirs.
    // Its call kRingDepth + 1 waits for the others' first: they start 20 ms after its
    // kRingDepth-th returned (a ring that let it run further would almost surely see `started`
    // unset; a right one never does). Each thread scribbles over its buffer once its call
    // returned: the ring must have taken what it needs.
    std::atomic<int> ahead{0}, started{0};
    on_threads(threads, [&](int t) {
      if (t != 0) {
        while (ahead.load() < depth) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        started.store(1);
      }
      const int rank = env.rank() * threads + t;
      for (int i = 0; i <= depth; ++i) {
        std::vector<std::byte> buf(40, std::byte{0xee});
        if (rank == 0)
          for (std::size_t k = 0; k < buf.size(); ++k) buf[k] = pattern(i, k);
        c.bcast(t, buf, 0);
        for (std::size_t k = 0; k < buf.size(); ++k)
          if (buf[k] != pattern(i, k)) return fail("ring bcast ahead, call " + std::to_string(i) + ": rank " + std::to_string(rank));
        std::fill(buf.begin(), buf.end(), std::byte{0xdd});
        if (t == 0) ahead.fetch_add(1);
        if (t == 0 && i == depth && started.load() == 0) fail("ring bcast: call kRingDepth + 1 did not wait for the others");
      }
    });
    // reduce and gather to rank 0: the other threads make kRingDepth calls before thread 0, the
    // leader, starts its.
    for (const bool gather : {false, true}) {
      ahead.store(0);
      started.store(0);
      on_threads(threads, [&](int t) {
        if (t == 0) {
          while (ahead.load() < depth * (threads - 1)) std::this_thread::yield();
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          started.store(1);
        }
        const int rank = env.rank() * threads + t;
        for (int i = 0; i <= depth; ++i) {
          const std::string name = std::string(gather ? "ring gather" : "ring reduce") + " ahead, call " + std::to_string(i);
          std::vector<std::byte> buf(24);
          if (gather) {
            for (std::size_t k = 0; k < buf.size(); ++k) buf[k] = pattern(rank + i, k);
            std::vector<std::byte> out(rank == 0 ? buf.size() * static_cast<std::size_t>(p) : 0);
            c.gather(t, buf, out, 0);
            for (int r = 0; rank == 0 && r < p; ++r)
              for (std::size_t k = 0; k < buf.size(); ++k)
                if (out[static_cast<std::size_t>(r) * buf.size() + k] != pattern(r + i, k))
                  return fail(name + ": block of rank " + std::to_string(r));
          } else {
            set_affine(buf, rank, i);
            c.reduce(t, buf, 0, affine);
            if (rank == 0) check_affine(buf, i, name);
          }
          std::fill(buf.begin(), buf.end(), std::byte{0xdd});
          if (t != 0) ahead.fetch_add(1);
          if (t != 0 && i == depth && started.load() == 0) fail(name + ": call kRingDepth + 1 did not wait for the leader");
        }
      });
    }
    // 600 calls back to back: bcast, reduce (the non-commutative fold) and gather in turn, every
    // root in turn, sizes 8 B to staged_up_to; every 50 calls one thread of each process
    // (rotating) arrives 2 ms late.
    on_threads(threads, [&](int t) {
      const int rank = env.rank() * threads + t;
      for (int i = 0; i < 600; ++i) {
        if (i % 50 == 0 && (i / 50) % threads == t) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        const int root = (i / 3) % p;
        const std::size_t bytes = i % 7 == 6 ? pc::CollectivesOptions{}.staged_up_to : 8 * static_cast<std::size_t>(1 + i % 5);
        std::vector<std::byte> buf(bytes);
        const std::string name = "ring call " + std::to_string(i) + " root " + std::to_string(root);
        switch (i % 3) {
          case 0: {
            for (std::size_t k = 0; k < bytes; ++k) buf[k] = rank == root ? pattern(root + i, k) : std::byte{0xee};
            c.bcast(t, buf, root);
            for (std::size_t k = 0; k < bytes; ++k)
              if (buf[k] != pattern(root + i, k)) return fail(name + " (bcast): rank " + std::to_string(rank));
            break;
          }
          case 1: {
            // The fold in rank order of call i's inputs, whichever rank is the root.
            set_affine(buf, rank, i);
            c.reduce(t, buf, root, affine);
            if (rank == root) check_affine(buf, i, name + " (reduce)");
            break;
          }
          default: {
            for (std::size_t k = 0; k < bytes; ++k) buf[k] = pattern(rank + i, k);
            std::vector<std::byte> out(rank == root ? bytes * static_cast<std::size_t>(p) : 0);
            c.gather(t, buf, out, root);
            for (int r = 0; rank == root && r < p; ++r)
              for (std::size_t k = 0; k < bytes; ++k)
                if (out[static_cast<std::size_t>(r) * bytes + k] != pattern(r + i, k))
                  return fail(name + " (gather): block of rank " + std::to_string(r));
          }
        }
      }
    });
    bcast_case(c, 8);
  }
  // Three threads per process (in the T = 2 runs, which ctest has): a leader or slice owner
  // after thread 1 folds into its own buffer, which a fold in plain thread order would overwrite
  // before reading it. reduce from every root (the root's thread is the leader) above and in the
  // ring, allreduce split across the threads (thread t folds its slice into its buffer).
  if (threads == 2) {
    pc::Collectives c3(MPI_COMM_WORLD, 3);
    reduce_case(c3, 3);
    reduce_case(c3, 4097);
    bcast_case(c3, 13);
    gather_case(c3, 13);
    pc::CollectivesOptions split;
    split.rabenseifner_min_bytes = 0;
    split.node_level = pc::AllreduceNodeLevel::split;
    pc::Collectives a3(MPI_COMM_WORLD, 3, split);
    for (const std::size_t n : {std::size_t{3}, std::size_t{13}, std::size_t{4097}}) {
      order_case(a3, n, "three threads, split");
      sum_case(a3, n, 8, "three threads, split");
    }
  }
  // barrier: in round i rank i mod p arrives 20 ms late; nobody leaves before it arrived (the
  // monotonic clock is the machine's, the same in every process here).
  {
    pc::Collectives c(MPI_COMM_WORLD, threads);
    const int p = env.size() * threads;
    const auto now_ns = [] {
      return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch()).count());
    };
    for (int round = 0; round < std::min(p, 4); ++round) {
      std::vector<double> arrived(static_cast<std::size_t>(threads)), left(static_cast<std::size_t>(threads));
      on_threads(threads, [&](int t) {
        if (env.rank() * threads + t == round) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        arrived[static_cast<std::size_t>(t)] = now_ns();
        c.barrier(t);
        left[static_cast<std::size_t>(t)] = now_ns();
      });
      double last_arrival = 0, first_leave = 0;
      const double my_last = *std::max_element(arrived.begin(), arrived.end());
      const double my_first = *std::min_element(left.begin(), left.end());
      MPI_Allreduce(&my_last, &last_arrival, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(&my_first, &first_leave, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      if (first_leave < last_arrival) fail("barrier round " + std::to_string(round) + ": a thread left before rank " +
                                           std::to_string(round) + " arrived");
    }
    for (int i = 0; i < 200; ++i) on_threads(threads, [&](int t) { c.barrier(t); });  // back to back, no hang
    bcast_case(c, 8);  // the barrier's messages do not match the others'
  }
  // A gather root's buffer too small: refused by the root's process (process 0) alone, there by
  // every thread above staged_up_to and by the root's thread alone in the ring (16 bytes); the
  // object is not used again.
  {
    pc::Collectives c(MPI_COMM_WORLD, threads);
    const int p = env.size() * threads;
    std::vector<int> ok(static_cast<std::size_t>(threads), 0);
    on_threads(threads, [&](int t) {
      std::vector<std::byte> block(16), out(16 * static_cast<std::size_t>(p) - 1);
      try {
        c.gather(t, block, out, 0);
        ok[static_cast<std::size_t>(t)] = env.rank() != 0 || t != 0;
      } catch (const postbox::InputError& e) {
        ok[static_cast<std::size_t>(t)] =
            env.rank() == 0 && t == 0 && std::string(e.what()).find("gather: the root's buffer has " + std::to_string(16 * p - 1) +
                                                          " bytes, the blocks need " + std::to_string(16 * p)) != std::string::npos;
      }
    });
    for (int t = 0; t < threads; ++t)
      if (ok[static_cast<std::size_t>(t)] == 0) fail("gather with a short root buffer: thread " + std::to_string(t));
  }

  int mine = g_failures, total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (env.rank() == 0) std::printf("cluster allreduce: %d processes x %d threads: %s\n", env.size(), threads, total == 0 ? "ok" : "FAILED");
  return total == 0 ? 0 : 1;
}
