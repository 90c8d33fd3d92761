// A sweep: the emulated run (selection.hpp: select_emulated_run) over a grid of its options,
// every configuration simulated in parallel (oneTBB). `postbox sweep` parses and prints; the
// grid, its checks and the parallel run are here, where tests and other front ends reach them.
// The grid is of option text, as typed: a swept value is what the selection parses, so the
// label printed is the value simulated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "postbox/collectives/plans.hpp"

namespace postbox {

// One swept option and its values, as text.
struct SweepParam {
  std::string name;
  std::vector<std::string> values;
};

// "NAME=FROM:TO:STEP", NAME one of alpha, bytes, p, lambda, seed, noise-gap, noise-detour: p,
// bytes and seed take integers (decimal), the others decimals written back with at most 12
// decimals (a value that needs more is refused). noise-gap and noise-detour replace the first and
// the second number of the base's "noise" spec (noise_parse.hpp: periodic's PERIOD and DETOUR, exp's
// and pareto's MEAN_GAP and MEAN_DETOUR or MIN_DETOUR). TO below FROM, STEP not positive, more than kMaxSweepValues values
// → InputError naming --param.
inline constexpr std::int64_t kMaxSweepValues = 100000;
SweepParam parse_sweep_param(const std::string& text);

// The grid: configuration i is the mixed-radix number over params, the last varying fastest.
struct SweepGrid {
  std::map<std::string, std::string> base;  // the other options, as given
  std::vector<SweepParam> params;
  [[nodiscard]] std::size_t size() const;
  // Param k's value in configuration i.
  [[nodiscard]] const std::string& value(std::size_t i, std::size_t k) const;
  // The options of configuration i: base plus every param's value.
  [[nodiscard]] std::map<std::string, std::string> given(std::size_t i) const;
};

// The grid of `base` (the emulated run's options as given) and the --param texts. No param, a
// name twice, a param also given as an option, more than kMaxSweepConfigurations → InputError
// naming the options.
inline constexpr std::size_t kMaxSweepConfigurations = 1000000;
SweepGrid sweep_grid(const std::map<std::string, std::string>& base, const std::vector<std::string>& param_texts);

// Every configuration's emulated time and events, in grid order, and the first configuration's
// request (for the op, p and bytes a report names).
struct SweepResult {
  std::vector<double> time_us;
  std::vector<std::uint64_t> events;
  PlanRequest first;
};

// The base may hold "noise" (a spec, noise_parse.hpp) and "noise-cosched" (any value): each
// configuration then runs under that noise, seeded by its "seed" (default 1); noise-gap or
// noise-detour swept without "noise", or "noise-cosched" without it → InputError.
// Selects (validates) every configuration first, so bad input fails before any simulation,
// then selects each again and simulates it in its own task: nothing is kept per configuration
// but its time and events, so memory does not grow with the grid. The InputError of the lowest
// bad configuration in grid order is thrown (with fields written as options). progress(done,
// total) is called after each simulation, from the task that finished it, under a lock, done
// going 1, 2, ..., total in the order of the calls.
SweepResult run_sweep(const SweepGrid& grid, const std::function<void(std::size_t, std::size_t)>& progress = {});

}  // namespace postbox
