// OS noise: detours that take a rank's CPU away for a while (LogGOPSim's --noise-trace and
// --noise-cosched; Hoefler, Schneider, Lumsdaine, "Characterizing the Influence of System Noise
// on Large-Scale Applications by Simulation", SC10). docs/emulator.md, "Noise", has the
// semantics and how they differ from LogGOPSim's.
//
// A Noise is one list of detours (start, length) in virtual ticks, repeated with its period, and
// shared by all ranks: rank r sees it shifted by offset(r), uniform in [0, period) and drawn from
// the seed (or 0 for every rank when co-scheduled). Nothing is kept per rank, so a run over 10^6
// ranks costs the list once; a query is a binary search in it.
//
// The text forms (--noise SPEC, --noise-trace FILE) are read by frontend/noise_parse.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "postbox/runtime/ticks.hpp"

namespace postbox::sim {

struct Detour {
  Ticks start = 0;
  Ticks length = 0;
  friend bool operator==(const Detour&, const Detour&) = default;
};

// How many detours a random noise (exponential(), pareto()) draws before it repeats: enough that
// ranks at random offsets rarely share a stretch of it, few enough to draw in about a millisecond.
inline constexpr std::size_t kRandomNoiseDetours = std::size_t{1} << 16;

class Noise {
 public:
  // `detours` repeated every `period` ticks. Each start is taken modulo the period (a detour at
  // the period is one at 0); a detour that runs past the period's end goes on at its start;
  // detours that overlap or touch are merged into one; zero-length ones are dropped.
  // InputError: period < 1; a negative start or length; a detour as long as the period or
  // longer, or detours covering the whole period (the CPU would never run).
  Noise(std::vector<Detour> detours, Ticks period, std::uint64_t seed, bool cosched);

  // One detour of `length` at the start of every period. length >= period → InputError.
  static Noise periodic(Ticks period, Ticks length, std::uint64_t seed, bool cosched);
  // `count` detours drawn from the seed: the gap before each exponential with mean `mean_gap`,
  // its length exponential with mean `mean_length`; the period is the sum of gaps and lengths.
  // mean_gap < 1 tick, mean_length < 0, or a drawn trace longer than kMaxTicks → InputError.
  static Noise exponential(Ticks mean_gap, Ticks mean_length, std::uint64_t seed, bool cosched,
                           std::size_t count = kRandomNoiseDetours);
  // As exponential(), the lengths Pareto with minimum `min_length` and shape alpha > 1 (a finite
  // mean, alpha / (alpha - 1) · min_length): heavy-tailed detours. alpha <= 1 → InputError.
  static Noise pareto(Ticks mean_gap, Ticks min_length, double alpha, std::uint64_t seed, bool cosched,
                      std::size_t count = kRandomNoiseDetours);

  [[nodiscard]] Ticks period() const { return period_; }
  // Sorted by start, disjoint and not touching (except across the period's end), each inside
  // [0, period).
  [[nodiscard]] const std::vector<Detour>& detours() const { return detours_; }
  [[nodiscard]] Ticks busy_per_period() const { return cum_.back(); }
  [[nodiscard]] bool cosched() const { return cosched_; }
  [[nodiscard]] std::uint64_t seed() const { return seed_; }

  // Where rank r's time 0 falls in the period: 0 when co-scheduled, else the high 64 bits of
  // splitmix64(splitmix64(seed ^ 0x6E6F697365) + r) · period — integer arithmetic only, so the
  // same on every platform.
  [[nodiscard]] Ticks offset(int rank) const;

  // When `work` ticks of CPU time begun at `start` on `rank` are done: the CPU runs only outside
  // the rank's detours, so every detour met on the way (one under way at `start` included) adds
  // its length (its rest). work <= 0 → start (nothing to run, nothing to wait for). An end past
  // kMaxTicks → InputError.
  [[nodiscard]] Ticks finish(int rank, Ticks start, Ticks work) const;

  // Calls f(begin, end) for each of the rank's detours (clipped) that overlaps [begin, end), in
  // time order.
  template <class F>
  void detours_in(int rank, Ticks begin, Ticks end, F&& f) const {
    if (detours_.empty() || end <= begin) return;
    const Ticks off = offset(rank);
    const Ticks x = begin + off;
    Ticks base = x / period_ * period_ - off;  // absolute time of this period's start
    std::size_t i = first_ending_after(x % period_);
    if (i == detours_.size()) {
      i = 0;
      base += period_;
    }
    for (;;) {
      const Ticks s = base + detours_[i].start;
      if (s >= end) return;
      const Ticks e = s + detours_[i].length;
      if (e > begin) f(s < begin ? begin : s, e < end ? e : end);
      if (++i == detours_.size()) {
        i = 0;
        base += period_;
      }
    }
  }

 private:
  [[nodiscard]] Ticks free_before(Ticks u) const;  // CPU time outside detours in [0, u), u in [0, period]
  [[nodiscard]] Ticks at_free(Ticks v) const;      // the first u with free_before(u) = v, v in (0, free]
  [[nodiscard]] std::size_t first_ending_after(Ticks u) const;

  std::vector<Detour> detours_;
  std::vector<Ticks> cum_;        // cum_[i]: detour time before detour i; cum_.back(): per period
  std::vector<Ticks> free_at_;    // free_at_[i]: CPU time before detour i starts
  Ticks period_ = 1;
  std::uint64_t seed_ = 1;
  bool cosched_ = false;
};

}  // namespace postbox::sim
