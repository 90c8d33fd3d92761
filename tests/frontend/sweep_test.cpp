// frontend/sweep.hpp: the grid's order and checks, and run_sweep's results, error and progress.
#include "postbox/frontend/sweep.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "postbox/emulator/simulator.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/runtime/check.hpp"

#include "input_error.hpp"

namespace postbox {
namespace {

using testing_support::input_error_of;

const std::map<std::string, std::string> kBase{{"machine", "postal:2"}, {"op", "bcast"}, {"algo", "binomial"}};

TEST(SweepGrid, TheLastParamVariesFastest) {
  const SweepGrid g = sweep_grid(kBase, {"p=2:4:1", "bytes=8:16:8"});
  ASSERT_EQ(g.size(), 6u);
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < g.size(); ++i) seen.push_back(g.value(i, 0) + "/" + g.value(i, 1));
  EXPECT_EQ(seen, (std::vector<std::string>{"2/8", "2/16", "3/8", "3/16", "4/8", "4/16"}));
  const auto given = g.given(3);
  EXPECT_EQ(given.at("p"), "3");
  EXPECT_EQ(given.at("bytes"), "16");
  EXPECT_EQ(given.at("machine"), "postal:2");
}

TEST(SweepGrid, ValuesAreTheTextTheSelectionParses) {
  EXPECT_EQ(parse_sweep_param("lambda=1:2:0.25").values, (std::vector<std::string>{"1", "1.25", "1.5", "1.75", "2"}));
  EXPECT_EQ(parse_sweep_param("seed=18446744073709551614:18446744073709551615:1").values,
            (std::vector<std::string>{"18446744073709551614", "18446744073709551615"}));
  EXPECT_EQ(input_error_of([] { (void)parse_sweep_param("lambda=1e-300:1e-299:1e-300"); }).rfind("--param lambda: value 1e-300 needs more than 12 decimals", 0), 0u);
}

TEST(SweepGrid, BadGridsAreRefusedNamingTheOptions) {
  EXPECT_EQ(input_error_of([] { (void)sweep_grid(kBase, {}); }), "sweep needs at least one --param NAME=FROM:TO:STEP");
  EXPECT_EQ(input_error_of([] { (void)sweep_grid(kBase, {"p=2:4:1", "p=5:6:1"}); }), "--param p given twice");
  EXPECT_EQ(input_error_of([] {
              auto b = kBase;
              b["p"] = "4";
              (void)sweep_grid(b, {"p=2:4:1"});
            }),
            "--p is swept by --param p; give one of them");
  EXPECT_EQ(input_error_of([] { (void)sweep_grid(kBase, {"p=1:1000:1", "bytes=0:1000:1"}); }), "sweep has more than 10^6 configurations");
  EXPECT_EQ(input_error_of([] { (void)sweep_grid(kBase, {"q=1:2:1"}); }), "--param name must be alpha, bytes, p, lambda, seed, noise-gap or noise-detour, got 'q'");
  EXPECT_EQ(input_error_of([] { (void)sweep_grid(kBase, {"p=4:2:1"}); }), "--param p: TO is below FROM");
  EXPECT_EQ(input_error_of([] { (void)sweep_grid(kBase, {"p=2:4"}); }), "--param must look like NAME=FROM:TO:STEP, got 'p=2:4'");
}

TEST(RunSweep, EachConfigurationIsItsOwnEmulatedRun) {
  const SweepGrid g = sweep_grid(kBase, {"p=2:33:5", "bytes=0:64:32"});
  std::size_t calls = 0, last = 0;
  const SweepResult r = run_sweep(g, [&](std::size_t done, std::size_t total) {
    ++calls;
    EXPECT_EQ(total, g.size());
    EXPECT_EQ(done, last + 1);  // under the lock, in order of completion
    last = done;
  });
  EXPECT_EQ(calls, g.size());
  ASSERT_EQ(r.time_us.size(), g.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    const EmulatedRun run = select_emulated_run(g.given(i));
    const sim::SimResult want = sim::simulate(build_plan(run.request), run.machine);
    EXPECT_EQ(r.time_us[i], want.time_us) << i;
    EXPECT_EQ(r.events[i], want.events) << i;
  }
  EXPECT_EQ(r.first.p, 2);
  EXPECT_EQ(r.first.op, "bcast");
}

// Noise axes, hand-computed on logp:5:2:3:0 (one message 0 → 1: o 2, arrival o + 5, accept o),
// co-scheduled: a detour [0, d) every P. noise-detour d = 0, 2, 4 under P = 1000: the send ends
// at d + 2, the accept at d + 9. noise-gap P = 5, 15 under d = 4: P = 5 — the send runs [4, 5)
// and [9, 10), the message arrives at 15 and the accept runs [19, 20) and [24, 25); P = 15 — the
// send [4, 6), arrival 11, accept [11, 13).
TEST(RunSweep, NoiseAxesRewriteTheSpec) {
  std::map<std::string, std::string> base{{"machine", "logp:5:2:3:0"}, {"op", "bcast"}, {"algo", "binomial"},
                                          {"p", "2"}, {"noise", "periodic:1000:4"}, {"noise-cosched", "yes"}};
  EXPECT_EQ(run_sweep(sweep_grid(base, {"noise-detour=0:4:2"})).time_us, (std::vector<double>{9, 11, 13}));
  EXPECT_EQ(run_sweep(sweep_grid(base, {"noise-gap=5:15:10"})).time_us, (std::vector<double>{25, 13}));
  base.erase("noise");
  EXPECT_EQ(input_error_of([&] { (void)run_sweep(sweep_grid(base, {"noise-detour=0:4:2"})); }),
            "--param noise-detour needs --noise SPEC");
  base["noise"] = "periodic:10:4";
  EXPECT_EQ(input_error_of([&] { (void)run_sweep(sweep_grid(base, {"noise-detour=5:10:5"})); }),
            "--noise 'periodic:10:10': DETOUR must be shorter than PERIOD");
}

TEST(RunSweep, TheLowestBadConfigurationIsReportedBeforeAnySimulation) {
  // p = 1..40 on a root of 30: every p <= 30 is refused; the first in grid order is p = 1.
  auto base = kBase;
  base["root"] = "30";
  const SweepGrid g = sweep_grid(base, {"p=1:40:1"});
  std::size_t simulated = 0;
  EXPECT_EQ(input_error_of([&] { (void)run_sweep(g, [&](std::size_t, std::size_t) { ++simulated; }); }).rfind("--root 30", 0), 0u);
  EXPECT_EQ(simulated, 0u);
  // The library's field errors are written as options.
  auto placed = kBase;
  placed["placement"] = "wrong";
  EXPECT_EQ(input_error_of([&] { (void)run_sweep(sweep_grid(placed, {"p=2:3:1"})); }).rfind("--placement", 0), 0u);
}

}  // namespace
}  // namespace postbox
