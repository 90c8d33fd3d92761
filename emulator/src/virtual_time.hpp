// Shared by the engine (simulator.cpp) and the mesh network (mesh_network.hpp): the bound every
// computed virtual time is checked against.
#pragma once

#include "postbox/runtime/check.hpp"
#include "postbox/runtime/ticks.hpp"

namespace postbox::sim::detail {

// t, or InputError when t is past kMaxTicks: below it no sum of two times overflows.
inline Ticks checked(Ticks t) {
  if (t > kMaxTicks) throw InputError("virtual time passes 2^62 ticks (53 days of microseconds)");
  return t;
}

}  // namespace postbox::sim::detail
