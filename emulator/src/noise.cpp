// The noise model (noise.hpp).
//
// Times on a rank are mapped into the shared detour list by adding the rank's offset. In the
// list, free_before(u) counts the CPU time outside detours in [0, u); over k whole periods it
// grows by k · (period − busy). A piece of work of w ticks begun at x (list time) ends at the
// first y with free(y) = free(x) + w, found by one division and one binary search, so a query
// costs O(log detours) whatever the work's length.
#include "postbox/emulator/noise.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/internal/splitmix.hpp"

namespace postbox::sim {
namespace {

__extension__ using int128 = __int128;
__extension__ using uint128 = unsigned __int128;

using internal::splitmix64;

// The draws of a random noise: splitmix64's sequence from a key of the seed (apart from the
// offsets' key, so the offsets do not follow the detours).
class Draws {
 public:
  explicit Draws(std::uint64_t seed) : state_(splitmix64(seed ^ 0x6465746F7572ULL)) {}
  // Uniform in (0, 1]: never 0, so its logarithm is finite.
  double unit() {
    state_ += internal::kSplitmixGolden;
    return static_cast<double>((splitmix64(state_) >> 11) + 1) * 0x1p-53;
  }

 private:
  std::uint64_t state_;
};

std::string ticks_text(Ticks t) { return std::to_string(t) + " ticks"; }

// A drawn length in ticks, refused past what a trace of `count` of them can hold.
Ticks drawn(double ticks, std::size_t count, const char* what) {
  const double cap = static_cast<double>(kMaxTicks) / 2 / static_cast<double>(count);
  if (!(ticks < cap))
    throw InputError(std::string("noise: a drawn ") + what + " of " + std::to_string(ticks) +
                     " ticks makes the trace longer than 2^62 ticks; try another --seed or smaller values");
  return static_cast<Ticks>(std::llround(ticks));
}

Noise random_noise(Ticks mean_gap, std::uint64_t seed, bool cosched, std::size_t count, const auto& length) {
  if (mean_gap < 1) throw InputError("noise: the mean gap between detours must be at least 1 tick, got " + ticks_text(mean_gap));
  if (count < 1) throw InputError("noise: a random noise needs at least one detour");
  Draws d(seed);
  std::vector<Detour> detours;
  detours.reserve(count);
  Ticks t = 0;
  for (std::size_t i = 0; i < count; ++i) {
    t += drawn(-static_cast<double>(mean_gap) * std::log(d.unit()), count, "gap");
    const Ticks len = drawn(length(d), count, "detour");
    detours.push_back({t, len});
    t += len;
  }
  // The gap before the first detour is the one after the last: the period ends at the last
  // detour's end plus one more gap, so no detour straddles the repetition.
  t += drawn(-static_cast<double>(mean_gap) * std::log(d.unit()), count, "gap");
  return Noise(std::move(detours), std::max<Ticks>(t, 1), seed, cosched);
}

}  // namespace

Noise::Noise(std::vector<Detour> detours, Ticks period, std::uint64_t seed, bool cosched)
    : period_(period), seed_(seed), cosched_(cosched) {
  if (period < 1) throw InputError("noise: the period must be at least 1 tick, got " + ticks_text(period));
  if (period > kMaxTicks) throw InputError("noise: the period passes 2^62 ticks");
  std::vector<Detour> pieces;
  pieces.reserve(detours.size() + 1);
  for (const Detour& d : detours) {
    if (d.start < 0) throw InputError("noise: a detour starts at " + ticks_text(d.start) + ", before 0");
    if (d.length < 0) throw InputError("noise: a detour has a negative length, " + ticks_text(d.length));
    if (d.length >= period)
      throw InputError("noise: a detour of " + ticks_text(d.length) + " is not shorter than the period, " + ticks_text(period) +
                       " (the CPU would never run)");
    if (d.length == 0) continue;
    const Ticks s = d.start % period;
    if (s + d.length <= period) {
      pieces.push_back({s, d.length});
    } else {  // runs past the period's end: the rest at its start
      pieces.push_back({s, period - s});
      pieces.push_back({0, s + d.length - period});
    }
  }
  std::sort(pieces.begin(), pieces.end(), [](const Detour& a, const Detour& b) { return a.start < b.start; });
  for (const Detour& d : pieces) {
    if (!detours_.empty() && d.start <= detours_.back().start + detours_.back().length) {
      Detour& last = detours_.back();
      last.length = std::max(last.length, d.start + d.length - last.start);
    } else {
      detours_.push_back(d);
    }
  }
  cum_.assign(detours_.size() + 1, 0);
  free_at_.assign(detours_.size(), 0);
  for (std::size_t i = 0; i < detours_.size(); ++i) {
    cum_[i + 1] = cum_[i] + detours_[i].length;
    free_at_[i] = detours_[i].start - cum_[i];
  }
  if (cum_.back() >= period)
    throw InputError("noise: the detours cover the whole period of " + ticks_text(period) + " (the CPU would never run)");
}

Noise Noise::periodic(Ticks period, Ticks length, std::uint64_t seed, bool cosched) {
  if (length < 0) throw InputError("noise: the detour length must not be negative, got " + ticks_text(length));
  if (period >= 1 && length >= period)
    throw InputError("noise: the detour, " + ticks_text(length) + ", must be shorter than the period, " + ticks_text(period));
  return Noise({{0, length}}, period, seed, cosched);
}

Noise Noise::exponential(Ticks mean_gap, Ticks mean_length, std::uint64_t seed, bool cosched, std::size_t count) {
  if (mean_length < 0) throw InputError("noise: the mean detour length must not be negative, got " + ticks_text(mean_length));
  return random_noise(mean_gap, seed, cosched, count,
                      [&](Draws& d) { return -static_cast<double>(mean_length) * std::log(d.unit()); });
}

Noise Noise::pareto(Ticks mean_gap, Ticks min_length, double alpha, std::uint64_t seed, bool cosched, std::size_t count) {
  if (min_length < 0) throw InputError("noise: the minimum detour length must not be negative, got " + ticks_text(min_length));
  // alpha <= 1 has no mean: one draw would dwarf the rest of the trace.
  if (!(alpha > 1) || !std::isfinite(alpha))
    throw InputError("noise: the Pareto shape alpha must be a number above 1, got " + std::to_string(alpha));
  return random_noise(mean_gap, seed, cosched, count,
                      [&](Draws& d) { return static_cast<double>(min_length) * std::pow(d.unit(), -1.0 / alpha); });
}

Ticks Noise::offset(int rank) const {
  if (cosched_) return 0;
  const std::uint64_t key = splitmix64(seed_ ^ 0x6E6F697365ULL);
  const std::uint64_t x = splitmix64(key + static_cast<std::uint64_t>(static_cast<std::uint32_t>(rank)));
  return static_cast<Ticks>((static_cast<uint128>(x) * static_cast<std::uint64_t>(period_)) >> 64);
}

Ticks Noise::free_before(Ticks u) const {
  // Detours starting before u: the last of them may still be under way at u.
  const auto it = std::lower_bound(detours_.begin(), detours_.end(), u, [](const Detour& d, Ticks v) { return d.start < v; });
  const auto k = static_cast<std::size_t>(it - detours_.begin());
  if (k == 0) return u;
  const Detour& d = detours_[k - 1];
  return u - cum_[k - 1] - std::min(d.length, u - d.start);
}

Ticks Noise::at_free(Ticks v) const {
  // The detours that start with less than v of CPU time before them all come first.
  const auto j = static_cast<std::size_t>(std::lower_bound(free_at_.begin(), free_at_.end(), v) - free_at_.begin());
  return v + cum_[j];
}

std::size_t Noise::first_ending_after(Ticks u) const {
  return static_cast<std::size_t>(
      std::upper_bound(detours_.begin(), detours_.end(), u, [](Ticks v, const Detour& d) { return v < d.start + d.length; }) -
      detours_.begin());
}

Ticks Noise::finish(int rank, Ticks start, Ticks work) const {
  if (work <= 0) return start;
  if (detours_.empty()) return start + work;
  const Ticks off = offset(rank);
  const Ticks x = start + off;
  const Ticks free = period_ - cum_.back();
  const int128 target = static_cast<int128>(x / period_) * free + free_before(x % period_) + work;
  int128 q = target / free;
  Ticks v = static_cast<Ticks>(target % free);
  if (v == 0) {  // the work ends with the CPU time of period q − 1, before its trailing detours
    --q;
    v = free;
  }
  const int128 end = q * period_ + at_free(v) - off;
  if (end > kMaxTicks) throw InputError("virtual time passes 2^62 ticks (53 days of microseconds)");
  return static_cast<Ticks>(end);
}

}  // namespace postbox::sim
