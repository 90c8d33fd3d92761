// The text forms of OS noise (emulator/noise.hpp): a spec (`postbox sim --noise SPEC`) and a
// noise trace file in LogGOPSim's format (`--noise-trace FILE`). docs/emulator.md, "Noise".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "postbox/emulator/noise.hpp"

namespace postbox::sim {

// Times in the model's unit (microseconds for every model but postal), as in model strings:
//   periodic:PERIOD:DETOUR           one detour of DETOUR at the start of every PERIOD
//   exp:MEAN_GAP:MEAN_DETOUR         gaps and detours exponential (kRandomNoiseDetours drawn)
//   pareto:MEAN_GAP:MIN_DETOUR:ALPHA gaps exponential, detours Pareto (minimum, shape > 1)
// Anything else, a field that is not a number, a negative time, DETOUR >= PERIOD → InputError
// quoting the spec.
Noise parse_noise_spec(std::string_view spec, std::uint64_t seed, bool cosched);

// LogGOPSim's noise trace: one detour a line, its start and its duration in nanoseconds (10^-3
// of the model's unit), separated by blanks; `#` starts a comment line; blank lines are skipped.
// Starts may not decrease; the last line's start is the trace's length, after which it repeats
// (its detour is the one at 0 of the next repetition). Overlapping detours are merged. A line
// that is not two numbers, a negative number, a start below the line before's, a detour not
// shorter than the trace, no lines, a last start of 0, or detours that leave no CPU time →
// InputError "NAME:LINE: problem" (NAME: the file, as the user named it).
Noise parse_noise_trace(std::string_view text, std::string_view name, std::uint64_t seed, bool cosched);

// A run's noise from options given by name, as sweep and the Python module take them: "noise"
// (a spec above), "noise-cosched" (any value: co-scheduled), "noise-gap" and "noise-detour"
// (written into the spec's first and second number, for a sweep's axes), seeded by "seed"
// (default 1). Those four keys are taken out of `given` (the plan selection does not read them;
// "seed" stays). No "noise": nullopt, and noise-gap, noise-detour or noise-cosched without it →
// InputError.
std::optional<Noise> take_noise_options(std::map<std::string, std::string>& given);

}  // namespace postbox::sim
