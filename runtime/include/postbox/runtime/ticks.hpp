// Virtual time of the emulator: an integer count of ticks, 10^-6 of the model's unit (1 ps when
// the model's numbers are microseconds, as in model strings and profiles). Every parameter is
// rounded to a whole tick once, a per-byte cost to 10^-6 tick per byte, so sums and comparisons
// are exact: ties are ties, and a model whose numbers are whole ticks in two units (µs and ns
// strings) gives the same time in both.
#pragma once

#include <cstdint>
#include <string_view>

namespace postbox::sim {

using Ticks = std::int64_t;
inline constexpr Ticks kTicksPerUnit = 1'000'000;
// Times past this are refused (InputError), so no sum of two can overflow: 2^62 ticks is 53 days
// of microseconds.
inline constexpr Ticks kMaxTicks = Ticks{1} << 62;

// `units` of the model's unit as ticks, rounded to the nearest. NaN, negative, or more than 10^12
// units → InputError naming `what`.
Ticks to_ticks(double units, std::string_view what);

// A per-byte cost, exact to 10^-6 tick per byte; at(bytes) rounds the product to the nearest tick.
struct PerByte {
  std::int64_t micro_ticks = 0;  // 10^-6 tick per byte
  [[nodiscard]] Ticks at(std::uint64_t bytes) const;
  friend bool operator==(const PerByte&, const PerByte&) = default;
};
// NaN, negative, or more than 10^6 units per byte → InputError naming `what`.
PerByte to_per_byte(double units_per_byte, std::string_view what);

// Ticks in the model's unit (for display; not exact beyond 2^53 ticks).
inline double to_units(Ticks t) { return static_cast<double>(t) / static_cast<double>(kTicksPerUnit); }

}  // namespace postbox::sim
