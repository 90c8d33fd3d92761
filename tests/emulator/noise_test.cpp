// OS noise (noise.hpp, its text forms in noise_parse.hpp, SimOptions::noise) against
// hand-computed cases. Times: 1 µs = 10^6 ticks.
#include "postbox/emulator/noise.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/rational.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/emulator/schedule.hpp"
#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/goal_parse.hpp"
#include "postbox/frontend/machines.hpp"
#include "postbox/frontend/noise_parse.hpp"
#include "postbox/frontend/trace_writer.hpp"
#include "postbox/runtime/check.hpp"

#include "input_error.hpp"

namespace postbox::sim {
namespace {

constexpr Ticks us = 1'000'000;

// One 8-byte message from rank 0 to rank 1 on logp:5:2:3:0 (L 5, o 2, g 3, G 0): the send keeps
// rank 0's CPU over [0, 2), the message arrives at 7, rank 1 accepts it over [7, 9).
const char* kOneMessage = "num_ranks 2\nrank 0 {\nl1: send 8b to 1\n}\nrank 1 {\nl1: recv 8b from 0\n}\n";

SimResult run(const std::string& goal, const Noise* noise, bool trace = false) {
  SimOptions opt;
  opt.noise = noise;
  opt.trace = trace;
  return simulate(read_goal_schedule(goal).schedule, load_machine("logp:5:2:3:0"), opt);
}

using testing_support::input_error_of;

TEST(Noise, FinishRunsTheWorkOutsideTheDetours) {
  // A detour of 2 at the start of every 10 ticks, the same for every rank (co-scheduled).
  const Noise n = Noise::periodic(10, 2, 1, true);
  EXPECT_EQ(n.finish(0, 0, 1), 3);    // waits out [0, 2)
  EXPECT_EQ(n.finish(0, 1, 1), 3);    // begun inside the detour: its rest, 1
  EXPECT_EQ(n.finish(0, 3, 7), 10);   // ends just as the next detour starts: not charged
  EXPECT_EQ(n.finish(0, 3, 8), 13);   // one tick more: the whole detour [10, 12)
  EXPECT_EQ(n.finish(0, 0, 80), 100); // ten periods of 8 free ticks each
  EXPECT_EQ(n.finish(0, 5, 0), 5);    // no work, no wait
  EXPECT_EQ(n.finish(7, 1000000003, 8), 1000000013);  // far periods alike
}

// finish() against a tick-by-tick walk: the CPU runs in tick t when t + offset, modulo the
// period, lies in no detour of the normalised list. Small periods and random detours, starts,
// works and ranks (a fixed LCG, so the cases are the same every run).
TEST(Noise, FinishEqualsATickByTickWalk) {
  std::uint64_t state = 12345;
  auto next = [&](std::uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<Ticks>((state >> 33) % n);
  };
  for (int trial = 0; trial < 300; ++trial) {
    const Ticks period = 2 + next(40);
    std::vector<Detour> raw;
    for (Ticks k = next(5); k > 0; --k) raw.push_back({next(2 * period), next(period / 2 + 1)});
    bool cpu_runs = false;  // skip lists that leave no CPU time (refused, tested above)
    std::vector<char> away(static_cast<std::size_t>(period), 0);
    for (const Detour& d : raw)
      for (Ticks t = d.start; t < d.start + d.length; ++t) away[static_cast<std::size_t>(t % period)] = 1;
    for (char a : away) cpu_runs = cpu_runs || a == 0;
    if (!cpu_runs) continue;
    const Noise n(raw, period, static_cast<std::uint64_t>(trial), trial % 3 == 0);
    for (int q = 0; q < 20; ++q) {
      const int rank = static_cast<int>(next(1000));
      const Ticks start = next(300), work = next(60);
      const Ticks off = n.offset(rank);
      Ticks t = start, done = 0;
      while (done < work) {
        if (!away[static_cast<std::size_t>((t + off) % period)]) ++done;
        ++t;
      }
      SCOPED_TRACE("trial " + std::to_string(trial) + " rank " + std::to_string(rank) + " start " +
                   std::to_string(start) + " work " + std::to_string(work));
      EXPECT_EQ(n.finish(rank, start, work), t);
      Ticks in_detours = 0;
      n.detours_in(rank, start, t, [&](Ticks b, Ticks e) { in_detours += e - b; });
      EXPECT_EQ(in_detours, t - start - work);  // the detours met are exactly the time added
    }
  }
}

TEST(Noise, DetoursInListsTheRanksDetoursClipped) {
  const Noise n = Noise::periodic(10, 2, 1, true);
  std::vector<Detour> seen;
  n.detours_in(0, 5, 25, [&](Ticks b, Ticks e) { seen.push_back({b, e - b}); });
  EXPECT_EQ(seen, (std::vector<Detour>{{10, 2}, {20, 2}}));
  seen.clear();
  n.detours_in(0, 1, 11, [&](Ticks b, Ticks e) { seen.push_back({b, e - b}); });  // clipped at both ends
  EXPECT_EQ(seen, (std::vector<Detour>{{1, 1}, {10, 1}}));
  seen.clear();
  n.detours_in(0, 2, 10, [&](Ticks b, Ticks e) { seen.push_back({b, e - b}); });  // between two detours
  EXPECT_TRUE(seen.empty());
}

TEST(Noise, RefusedRandomNoisesAndTimesPastTheLimit) {
  EXPECT_NE(input_error_of([] { (void)Noise::exponential(10, -1, 1, true); }).find("mean detour length must not be negative"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { (void)Noise::pareto(10, -1, 2, 1, true); }).find("minimum detour length must not be negative"),
            std::string::npos);
  // 2^16 detours of mean 10^15 ticks cannot fit below 2^62 ticks.
  EXPECT_NE(input_error_of([] { (void)Noise::exponential(10, 1'000'000'000'000'000, 1, true); }).find("longer than 2^62 ticks"),
            std::string::npos);
  const Noise n = Noise::periodic(10, 2, 1, true);
  EXPECT_NE(input_error_of([&] { (void)n.finish(0, kMaxTicks - 5, 10); }).find("passes 2^62 ticks"), std::string::npos);
}

TEST(Noise, DetoursAreWrappedMergedAndChecked) {
  // A detour past the period's end goes on at its start; a start at the period is one at 0.
  EXPECT_EQ(Noise({{4, 3}}, 5, 1, true).detours(), (std::vector<Detour>{{0, 2}, {4, 1}}));
  EXPECT_EQ(Noise({{5, 1}, {2, 1}}, 5, 1, true).detours(), (std::vector<Detour>{{0, 1}, {2, 1}}));
  // Overlapping and touching detours merge; zero-length ones go.
  EXPECT_EQ(Noise({{1, 3}, {2, 3}, {5, 1}, {8, 0}}, 10, 1, true).detours(), (std::vector<Detour>{{1, 5}}));
  EXPECT_EQ(Noise({{1, 3}, {2, 3}}, 10, 1, true).busy_per_period(), 4);
  EXPECT_NE(input_error_of([] { (void)Noise({}, 0, 1, true); }).find("period must be at least 1 tick"), std::string::npos);
  EXPECT_NE(input_error_of([] { (void)Noise({{0, -1}}, 10, 1, true); }).find("negative length"), std::string::npos);
  EXPECT_NE(input_error_of([] { (void)Noise({{-1, 1}}, 10, 1, true); }).find("before 0"), std::string::npos);
  EXPECT_NE(input_error_of([] { (void)Noise({{0, 10}}, 10, 1, true); }).find("not shorter than the period"), std::string::npos);
  EXPECT_NE(input_error_of([] { (void)Noise({{0, 5}, {5, 5}}, 10, 1, true); }).find("cover the whole period"), std::string::npos);
  EXPECT_NE(input_error_of([] { (void)Noise::periodic(10, 10, 1, true); }).find("shorter than the period"), std::string::npos);
  EXPECT_NE(input_error_of([] { (void)Noise::exponential(0, 5, 1, true); }).find("mean gap"), std::string::npos);
  EXPECT_NE(input_error_of([] { (void)Noise::pareto(10, 5, 1.0, 1, true); }).find("alpha must be a number above 1"),
            std::string::npos);
}

// The offsets are splitmix64 as noise.hpp states; these values were computed apart from this
// code (a few lines of Python with the same constants), so a platform or a change that moves
// them fails here.
TEST(Noise, OffsetsComeFromTheSeedAlone) {
  const Noise a = Noise::periodic(1000 * us, 4 * us, 1, false);
  EXPECT_EQ(a.offset(0), 96146542);
  EXPECT_EQ(a.offset(1), 158480975);
  EXPECT_EQ(a.offset(3), 786717058);
  const Noise b = Noise::periodic(1000 * us, 4 * us, 2, false);
  EXPECT_EQ(b.offset(0), 456997146);
  EXPECT_EQ(b.offset(1), 179496741);
  const Noise c = Noise::periodic(1000 * us, 4 * us, 2, true);
  EXPECT_EQ(c.offset(0), 0);
  EXPECT_EQ(c.offset(1), 0);
}

// Without co-scheduling rank r meets the detour of local time 0 at period − offset(r): for rank 0
// and seed 1, 10^9 − 96146542 = 903853458. Work of 2 µs begun 1 µs before that is stretched by
// the detour's 4 µs on rank 0 only; rank 1 (offset 158480975) has its detour at 841519025, and
// co-scheduled ranks have theirs at 0 and 10^9.
TEST(Noise, CoscheduledRanksShareOneOffsetOthersDoNot) {
  const Noise own = Noise::periodic(1000 * us, 4 * us, 1, false);
  const Noise shared = Noise::periodic(1000 * us, 4 * us, 1, true);
  const Ticks start = 903853458 - 1 * us;
  EXPECT_EQ(own.finish(0, start, 2 * us), start + 6 * us);
  EXPECT_EQ(own.finish(1, start, 2 * us), start + 2 * us);
  EXPECT_EQ(shared.finish(0, start, 2 * us), start + 2 * us);
  EXPECT_EQ(shared.finish(0, 999 * us, 2 * us), 1005 * us);
  EXPECT_EQ(shared.finish(1, 999 * us, 2 * us), 1005 * us);
}

TEST(Noise, RandomNoiseIsDeterministicPerSeed) {
  const Noise a = Noise::exponential(100 * us, 5 * us, 7, false, 1000);
  const Noise b = Noise::exponential(100 * us, 5 * us, 7, false, 1000);
  const Noise c = Noise::exponential(100 * us, 5 * us, 8, false, 1000);
  EXPECT_EQ(a.detours(), b.detours());
  EXPECT_EQ(a.period(), b.period());
  EXPECT_NE(a.detours(), c.detours());
  const Noise p = Noise::pareto(100 * us, 5 * us, 2.5, 7, false, 1000);
  for (const Detour& d : p.detours()) EXPECT_GE(d.length, 5 * us);  // Pareto: never below the minimum
  // The same noise gives the same run; another seed other offsets.
  std::string goal = "num_ranks 4\n";
  for (int r = 0; r < 4; ++r) goal += "rank " + std::to_string(r) + " {\nl1: calc 5000\n}\n";
  const SimResult ra = run(goal, &a), rb = run(goal, &b), rc = run(goal, &c);
  EXPECT_EQ(ra.per_rank_ticks, rb.per_rank_ticks);
  EXPECT_EQ(ra.noise_ticks, rb.noise_ticks);
  EXPECT_NE(ra.per_rank_ticks, rc.per_rank_ticks);
}

// A detour of 4 µs at 1 µs stretches the sender's o from [0, 2) to [0, 6); the message leaves
// when the overhead is done, so it arrives at 6 + 5 = 11 and is accepted over [11, 13).
TEST(NoiseSim, ADetourInTheSendersOverheadStretchesItByTheDetour) {
  const Noise n({{1 * us, 4 * us}}, 1000 * us, 1, true);
  const SimResult r = run(kOneMessage, &n, true);
  EXPECT_EQ(r.per_rank_ticks, (std::vector<Ticks>{6 * us, 13 * us}));
  EXPECT_EQ(r.noise_ticks, 4 * us);
  EXPECT_DOUBLE_EQ(r.noise_us, 4);
  // Traced: the detour is a span of its own (what 6) inside the send's [0, 6).
  bool seen = false;
  for (const Span& s : r.rank_spans) {
    if (s.what == 6) {
      EXPECT_EQ(s.track, 0);
      EXPECT_DOUBLE_EQ(s.begin_us, 1);
      EXPECT_DOUBLE_EQ(s.end_us, 5);
      seen = true;
    }
    if (s.what == 0) {
      EXPECT_DOUBLE_EQ(s.end_us, 6);
    }
  }
  EXPECT_TRUE(seen);
  std::ostringstream chrome;
  write_chrome_trace(chrome, r, read_goal_schedule(kOneMessage).schedule, load_machine("logp:5:2:3:0"));
  EXPECT_NE(chrome.str().find("\"name\":\"noise\""), std::string::npos);
}

// The gaps are the NIC's and take no noise. Rank 0 sends to 1, then to 2 (logp:5:2:3:0: o 2,
// g 3). A detour [0, 1) stretches the first send to [1, 3); the send gap still ends at 3, so the
// second send runs [3, 5) as without noise. The first message leaves at 3 and arrives at 8
// (accepted [8, 10)); the second arrives at 10 (accepted [10, 12)).
TEST(NoiseSim, TheGapsAreNotStretched) {
  const char* two = "num_ranks 3\nrank 0 {\nl1: send 8b to 1\nl2: send 8b to 2\nl2 requires l1\n}\n"
                    "rank 1 {\nl1: recv 8b from 0\n}\nrank 2 {\nl1: recv 8b from 0\n}\n";
  EXPECT_EQ(run(two, nullptr).per_rank_ticks, (std::vector<Ticks>{5 * us, 9 * us, 12 * us}));
  const Noise n({{0, 1 * us}}, 1000 * us, 1, true);
  EXPECT_EQ(run(two, &n).per_rank_ticks, (std::vector<Ticks>{5 * us, 10 * us, 12 * us}));
}

// Detours while no rank computes (rank 0 busy [0, 2), rank 1 [7, 9)) change nothing.
TEST(NoiseSim, ADetourOutsideEveryBusyPeriodChangesNothing) {
  const Noise n({{3 * us, 4 * us}, {10 * us, 50 * us}}, 1000 * us, 1, true);
  const SimResult quiet = run(kOneMessage, nullptr);
  const SimResult noisy = run(kOneMessage, &n);
  EXPECT_EQ(quiet.per_rank_ticks, (std::vector<Ticks>{2 * us, 9 * us}));
  EXPECT_EQ(noisy.per_rank_ticks, quiet.per_rank_ticks);
  EXPECT_EQ(noisy.noise_ticks, 0);
  // A noise with no detours at all is no noise.
  const Noise none({{5, 0}}, 10, 1, false);
  EXPECT_EQ(run(kOneMessage, &none).per_rank_ticks, quiet.per_rank_ticks);
}

// The receiver's overhead is CPU time too: a detour of 3 µs at 8 µs on rank 1 (the send is over
// by then) stretches its accept [7, 9) to [7, 12).
TEST(NoiseSim, ADetourInTheReceiveOverheadStretchesIt) {
  const Noise n({{8 * us, 3 * us}}, 1000 * us, 1, true);
  EXPECT_EQ(run(kOneMessage, &n).per_rank_ticks, (std::vector<Ticks>{2 * us, 12 * us}));
}

// LogGOPSim's trace format, periodic: "0 1000" and the last line "5000 0" (nanoseconds) make a
// 1 µs detour every 5 µs. A GOAL calc of 10 µs from 0 runs [1, 5), [6, 10), [11, 13): done at 13.
TEST(NoiseSim, ATraceRepeatsWithItsLengthOnAGoalSchedule) {
  const Noise n = parse_noise_trace("# a comment\n0 1000\n\n5000\t0\n", "t.txt", 1, true);
  EXPECT_EQ(n.period(), 5 * us);
  EXPECT_EQ(n.detours(), (std::vector<Detour>{{0, 1 * us}}));
  const SimResult r = run("num_ranks 1\nrank 0 {\nl1: calc 10\n}\n", &n);
  EXPECT_EQ(r.per_rank_ticks, (std::vector<Ticks>{13 * us}));
  EXPECT_EQ(r.noise_ticks, 3 * us);
  // The last line's detour sits at the start of the next repetition (merged with one there).
  EXPECT_EQ(parse_noise_trace("0 1000\n2000 500\n5000 1500\n", "t", 1, true).detours(),
            (std::vector<Detour>{{0, 1500000}, {2 * us, 500000}}));
}

// Under noise, ranks' times fall on detour ends, so an event often moves from a rank's pending
// heap to a ready heap at exactly its own time (its key unchanged): the per-rank queues must
// still pop the event where it now is, and equal LogGOPSim's put-back loop. (Before the rank
// queue's entries named their heap, dissemination at p = 10^4 with the periodic noise crashed.)
TEST(NoiseSim, PerRankQueuesEqualThePutBackLoop) {
  const Noise periodic = Noise::periodic(1000 * us, 25 * us, 1, false);
  const Noise exp = Noise::exponential(200 * us, 10 * us, 3, false, 4096);
  const Machine m = load_machine("logp:5:1:2:0");
  for (const char* algo : {"tournament", "dissemination", "fibo"}) {
    PlanRequest req;
    req.op = "barrier";
    req.algo = algo;
    req.p = 10000;
    req.lambda = Rational(2);
    const Schedule sched = schedule_of(build_plan(req));
    for (const Noise* n : {&periodic, &exp}) {
      SCOPED_TRACE(std::string(algo) + (n == &exp ? " exp" : " periodic"));
      SimOptions lazy, ref;
      lazy.noise = ref.noise = n;
      ref.reference_queue = true;
      const SimResult a = simulate(sched, m, lazy);
      const SimResult b = simulate(sched, m, ref);
      EXPECT_GT(a.noise_ticks, 0);
      EXPECT_EQ(a.per_rank_ticks, b.per_rank_ticks);
      EXPECT_EQ(a.noise_ticks, b.noise_ticks);
      EXPECT_EQ(a.events, b.events);
    }
  }
}

TEST(NoiseParse, BadTraceLinesAreNamed) {
  auto err = [](const char* text) { return input_error_of([&] { (void)parse_noise_trace(text, "n.txt", 1, false); }); };
  EXPECT_EQ(err("0 10\n5 x\n"), "n.txt:2: duration must be a number, got 'x'");
  EXPECT_EQ(err("0 10\n# c\n5 1 2\n"), "n.txt:3: expected START DURATION (nanoseconds), got '5 1 2'");
  EXPECT_EQ(err("0 -1\n10 0\n"), "n.txt:1: duration must not be negative, got -1");
  EXPECT_EQ(err("0 1\n10 1\n5 1\n"), "n.txt:3: start 5 is before the line before's (line 2)");
  EXPECT_EQ(err("# only a comment\n"), "n.txt: no detours (each line: START DURATION in nanoseconds)");
  EXPECT_EQ(err("0 10\n"), "n.txt:1: the last line's start is the trace's length and must be above 0");
  EXPECT_EQ(err("0 1000\n2000 2000\n1000 0\n"), "n.txt:3: start 1000 is before the line before's (line 2)");
  EXPECT_EQ(err("0 3000\n2000 0\n"), "n.txt:1: a detour not shorter than the trace's length (the last line's start)");
  EXPECT_NE(err("0 1500\n1500 1500\n3000 0\n").find("n.txt: noise: the detours cover the whole period"), std::string::npos);
}

TEST(NoiseParse, Specs) {
  const Noise p = parse_noise_spec("periodic:1000:25", 1, true);
  EXPECT_EQ(p.period(), 1000 * us);
  EXPECT_EQ(p.detours(), (std::vector<Detour>{{0, 25 * us}}));
  EXPECT_TRUE(p.cosched());
  EXPECT_EQ(parse_noise_spec("exp:100:5", 3, false).detours(), Noise::exponential(100 * us, 5 * us, 3, false).detours());
  EXPECT_EQ(parse_noise_spec("pareto:100:5:2.5", 3, false).detours(),
            Noise::pareto(100 * us, 5 * us, 2.5, 3, false).detours());
  auto err = [](const char* spec) { return input_error_of([&] { (void)parse_noise_spec(spec, 1, false); }); };
  EXPECT_EQ(err("periodic:10:10"), "--noise 'periodic:10:10': DETOUR must be shorter than PERIOD");
  EXPECT_EQ(err("periodic:10:-1"), "--noise 'periodic:10:-1': DETOUR must not be negative, got -1");
  EXPECT_EQ(err("periodic:0:0"), "--noise 'periodic:0:0': PERIOD must be above 0, got 0");
  EXPECT_EQ(err("pareto:10:1:1"), "--noise 'pareto:10:1:1': ALPHA must be above 1 (a finite mean), got 1");
  EXPECT_NE(err("gauss:1:2").find("must be periodic:PERIOD:DETOUR"), std::string::npos);
  EXPECT_NE(err("exp:1").find("must be periodic:PERIOD:DETOUR"), std::string::npos);
}

}  // namespace
}  // namespace postbox::sim
