// Adversarial schedules: every barrier × p in {2, 3, 5, 8, 13}, many seeds. Each seed scripts
// a run (per phase and rank: arrive_and_wait, split phase with work in between, reduction, or
// a drop; sometimes an abort at an arbitrary arrival) and, in a build with
// POSTBOX_INJECT_DELAYS, also drives the yields and sleeps injected before every
// synchronisation step of the engine and the mailboxes (runtime/internal/inject.hpp).
//
// Checked in every run: no rank leaves a phase before every participant arrived (G1); the
// completion step runs once per completed phase and only when every participant arrived (G4);
// reductions are exact; nothing reads a reduction argument after its owner left (the op checks
// a tag that the owner scribbles over once it has left); with an abort, every rank ends with
// Aborted or having finished, and no hang (the watchdog names who is stuck).
//
// Seeds: POSTBOX_ADVERSARIAL_SEEDS (count; default 200 with injection, 25 under TSan, 20
// without injection), POSTBOX_ADVERSARIAL_FIRST (first seed, default 1), or
// POSTBOX_ADVERSARIAL_SEED to replay one. A failure prints its seed and the replay command.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "barrier_support.hpp"
#include "postbox/barrier/barrier.hpp"
#include "postbox/runtime/internal/inject.hpp"

namespace postbox {
namespace {

using test::set_doing;
using test::test_options;

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

std::uint64_t default_seeds() {
  if (!internal::inject_compiled()) return 20;
#ifdef POSTBOX_TSAN
  return 25;
#else
  return 200;
#endif
}

std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

enum class Act : std::uint8_t { wait, split, reduce, drop };

// A reduction value with a tag: a fold that reads a dead frame sees a scribbled tag.
struct Tagged {
  std::uint64_t tag = 0;
  std::int64_t v = 0;
};
constexpr std::uint64_t kTag = 0x5eed5eed5eed5eedULL;

// Overwrites the stack below the caller, where a reduction argument lived.
__attribute__((noinline)) void scribble() {
  volatile std::uint64_t junk[2048];
  for (auto& j : junk) j = 0xdeadbeefdeadbeefULL;
}

struct Script {
  int p = 0;
  int phases = 0;
  std::vector<std::vector<Act>> act;  // [phase][rank]
  std::vector<int> participants;      // [phase]
  std::vector<std::int64_t> sum;      // [phase]: the expected reduction over the reducers
  long abort_after = -1;              // abort once this many arrivals happened (−1: never)
};

Script make_script(int p, std::uint64_t seed) {
  Script s;
  s.p = p;
  s.phases = 10 + static_cast<int>(mix(seed) % 6);
  std::vector<bool> alive(static_cast<std::size_t>(p), true);
  int alive_n = p;
  std::uint64_t h = mix(seed ^ 0xabcdef);
  auto next = [&h] { return h = mix(h); };
  long arrivals = 0;
  for (int k = 0; k < s.phases; ++k) {
    std::vector<Act> row(static_cast<std::size_t>(p), Act::wait);
    std::int64_t sum = 0;
    const bool reduce_phase = next() % 3 == 0;
    int participants = 0;
    for (int r = 0; r < p; ++r) {
      if (!alive[static_cast<std::size_t>(r)]) continue;
      ++participants;
      const std::uint64_t x = next() % 100;
      Act a = x < 45 ? Act::wait : x < 80 ? Act::split : Act::reduce;
      if (!reduce_phase && a == Act::reduce) a = Act::wait;
      if (x >= 96 && alive_n > 1 && k + 1 < s.phases) {
        a = Act::drop;
        alive[static_cast<std::size_t>(r)] = false;
        --alive_n;
      }
      if (a == Act::reduce) sum += r + 1 + k;
      row[static_cast<std::size_t>(r)] = a;
    }
    arrivals += participants;
    s.act.push_back(row);
    s.participants.push_back(participants);
    s.sum.push_back(sum);
  }
  if (next() % 4 == 0) s.abort_after = static_cast<long>(next() % static_cast<std::uint64_t>(arrivals + 1));
  return s;
}

// Runs one seed; returns what went wrong, if anything.
std::optional<std::string> run_seed(const std::string& name, int p, std::uint64_t seed) {
  const Script sc = make_script(p, seed);
  std::mutex mu;
  std::string failure;
  auto fail = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    if (failure.empty()) failure = what;
  };
  std::vector<std::atomic<int>> arrived(static_cast<std::size_t>(sc.phases));
  std::atomic<long> total_arrivals{0};
  std::atomic<int> completions{0};
  std::atomic<bool> abort_called{false};
  BarrierOptions o = test_options(name);
  o.completion = [&] {
    const int k = completions.load(std::memory_order_relaxed);
    if (k >= sc.phases) {
      fail("a completion step after the last phase");
      return;
    }
    if (arrived[static_cast<std::size_t>(k)].load(std::memory_order_relaxed) != sc.participants[static_cast<std::size_t>(k)]) {
      fail("completion of phase " + std::to_string(k) + " with " +
           std::to_string(arrived[static_cast<std::size_t>(k)].load()) + " of " +
           std::to_string(sc.participants[static_cast<std::size_t>(k)]) + " arrivals");
    }
    completions.store(k + 1, std::memory_order_relaxed);
  };
  auto b = make_barrier(name, p, std::move(o));
  internal::inject_start(internal::InjectConfig{seed});
  std::thread aborter;
  if (sc.abort_after >= 0) {
    aborter = std::thread([&] {
      internal::inject_bind_thread(1000);
      while (total_arrivals.load() < sc.abort_after && !abort_called.load()) std::this_thread::yield();
      b->abort();
      abort_called.store(true);
    });
  }
  std::atomic<int> finished{0};
  // The ranks: threads, or fibers under POSTBOX_RANKS=fibers (the aborter stays a thread: an
  // abort from outside the team must reach blocked workers too).
  const auto errors = test::run_ranks(p, [&](int r) {
    internal::inject_bind_thread(static_cast<std::uint64_t>(r));
    int k = 0;
    try {
      for (; k < sc.phases; ++k) {
        const Act a = sc.act[static_cast<std::size_t>(k)][static_cast<std::size_t>(r)];
        set_doing(r, "seed " + std::to_string(seed) + ", phase " + std::to_string(k) + ", act " +
                         std::to_string(static_cast<int>(a)));
        arrived[static_cast<std::size_t>(k)].fetch_add(1, std::memory_order_relaxed);
        total_arrivals.fetch_add(1);
        if (a == Act::drop) {
          b->arrive_and_drop(r);
          break;
        }
        if (a == Act::wait) {
          b->arrive_and_wait(r);
        } else if (a == Act::split) {
          BarrierToken t = b->arrive(r);
          for (int i = 0; i < static_cast<int>(mix(seed + static_cast<std::uint64_t>(r * 131 + k)) % 4); ++i) {
            test::yield_rank();
          }
          b->wait(r, t);
        } else {
          const Tagged mine{kTag ^ static_cast<std::uint64_t>(r), r + 1 + k};
          const Tagged got = b->arrive_and_reduce(r, mine, [&](Tagged x, Tagged y) {
            // Each input is either a rank's tagged value or an earlier partial result.
            if ((x.tag & ~0xFFFFULL) != (kTag & ~0xFFFFULL) || (y.tag & ~0xFFFFULL) != (kTag & ~0xFFFFULL)) {
              fail("a reduction read a value whose owner had left (tag " + std::to_string(y.tag) + ")");
            }
            // A slow op widens the window in which an abort may let an owner leave.
            for (std::uint64_t i = mix(seed ^ static_cast<std::uint64_t>(y.v)) % 3; i > 0; --i) test::yield_rank();
            return Tagged{kTag, x.v + y.v};
          });
          if (got.v != sc.sum[static_cast<std::size_t>(k)]) {
            fail("phase " + std::to_string(k) + ": reduction " + std::to_string(got.v) + ", expected " +
                 std::to_string(sc.sum[static_cast<std::size_t>(k)]));
          }
        }
        // G1: every participant of phase k has arrived before anyone leaves it.
        if (arrived[static_cast<std::size_t>(k)].load(std::memory_order_relaxed) != sc.participants[static_cast<std::size_t>(k)]) {
          fail("rank " + std::to_string(r) + " left phase " + std::to_string(k) + " after only " +
               std::to_string(arrived[static_cast<std::size_t>(k)].load()) + " of " +
               std::to_string(sc.participants[static_cast<std::size_t>(k)]) + " arrivals");
        }
        // G4: the completion of phase k ran before anyone left it.
        if (completions.load(std::memory_order_relaxed) < k + 1) {
          fail("rank " + std::to_string(r) + " left phase " + std::to_string(k) + " before its completion step");
        }
      }
    } catch (const Aborted&) {
      scribble();
      if (sc.abort_after < 0) fail("rank " + std::to_string(r) + " threw Aborted without an abort");
    } catch (const std::exception& e) {
      fail("rank " + std::to_string(r) + " threw " + e.what());
    }
    set_doing(r, "finished");
    finished.fetch_add(1);
  });
  test::expect_no_errors(errors);
  abort_called.store(true);  // an aborter still waiting for arrivals that never come stops
  if (aborter.joinable()) aborter.join();
  internal::inject_stop();
  if (sc.abort_after < 0 && completions.load() != sc.phases) {
    fail(std::to_string(completions.load()) + " completion steps for " + std::to_string(sc.phases) + " phases");
  }
  if (!failure.empty()) return failure;
  return std::nullopt;
}

// Run only by the ctest entry watchdog.names_waiting_barrier_fibers (tests/barrier/CMakeLists.txt),
// with POSTBOX_RANKS=fibers and a 2 s watchdog: rank 3 loses its wake-up (it waits on a word
// nobody changes) and the others wait for it in the barrier. The report must say what each rank
// was doing (stuck.hpp, keyed by rank, not by thread) and name the fiber ranks still waiting.
TEST(AdversarialWatchdog, DISABLED_ALostWakeupIsReportedWithTheRanksStillWaiting) {
  auto b = make_barrier("central", 4, test_options("central"));
  std::atomic<std::uint32_t> word{0};
  test::expect_no_errors(test::run_ranks(4, [&](int r) {
    if (r == 3) {
      set_doing(r, "waiting for a wake-up nobody sends");
      wait_until(word, [] { return false; });
    }
    set_doing(r, "in arrive_and_wait");
    b->arrive_and_wait(r);
  }));
}

struct Config {
  std::string name;
  int p;
};

class Adversarial : public testing::TestWithParam<Config> {};

TEST_P(Adversarial, ContractHoldsForEverySeed) {
  const Config& c = GetParam();
  const std::uint64_t one = env_u64("POSTBOX_ADVERSARIAL_SEED", 0);
  const std::uint64_t first = one != 0 ? one : env_u64("POSTBOX_ADVERSARIAL_FIRST", 1);
  const std::uint64_t count = one != 0 ? 1 : env_u64("POSTBOX_ADVERSARIAL_SEEDS", default_seeds());
  int failed = 0;
  for (std::uint64_t seed = first; seed < first + count && failed < 3; ++seed) {
    const std::optional<std::string> f = run_seed(c.name, c.p, seed);
    if (!f) continue;
    ++failed;
    ADD_FAILURE() << c.name << " p=" << c.p << " seed " << seed << ": " << *f
                  << "\n  replay: POSTBOX_ADVERSARIAL_SEED=" << seed << " " << testing::internal::GetArgvs()[0]
                  << " --gtest_filter='*" << c.name << "_p" << c.p << "'";
  }
  std::printf("%s p=%d: %llu seeds, injection %s, %llu sync points passed in the last seed\n", c.name.c_str(), c.p,
              static_cast<unsigned long long>(count), internal::inject_compiled() ? "on" : "off (not compiled in)",
              static_cast<unsigned long long>(internal::inject_points()));
}

std::vector<Config> all_configs() {
  std::vector<Config> v;
  for (const std::string& name : barrier_names()) {
    for (int p : {2, 3, 5, 8, 13}) v.push_back({name, p});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, Adversarial, testing::ValuesIn(all_configs()),
                         [](const testing::TestParamInfo<Config>& i) { return i.param.name + "_p" + std::to_string(i.param.p); });

}  // namespace
}  // namespace postbox
