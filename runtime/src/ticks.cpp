#include "postbox/runtime/ticks.hpp"

#include <cmath>
#include <string>

#include "postbox/runtime/check.hpp"

namespace postbox::sim {

Ticks to_ticks(double units, std::string_view what) {
  if (!std::isfinite(units) || units < 0) throw InputError(std::string(what) + " must be a finite number >= 0");
  if (units > 1e12) throw InputError(std::string(what) + " must be at most 10^12 units");
  return static_cast<Ticks>(std::llround(units * static_cast<double>(kTicksPerUnit)));
}

PerByte to_per_byte(double units_per_byte, std::string_view what) {
  if (!std::isfinite(units_per_byte) || units_per_byte < 0) throw InputError(std::string(what) + " must be a finite number >= 0");
  if (units_per_byte > 1e6) throw InputError(std::string(what) + " must be at most 10^6 units per byte");
  return PerByte{static_cast<std::int64_t>(std::llround(units_per_byte * 1e12))};
}

Ticks PerByte::at(std::uint64_t bytes) const {
  __extension__ using int128 = __int128;
  const int128 t = (static_cast<int128>(bytes) * micro_ticks + 500'000) / 1'000'000;
  if (t > kMaxTicks) throw InputError("a per-byte cost times " + std::to_string(bytes) + " bytes passes the emulator's time range");
  return static_cast<Ticks>(t);
}

}  // namespace postbox::sim
