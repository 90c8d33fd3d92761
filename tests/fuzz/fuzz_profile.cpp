// libFuzzer target: machine profiles (sim/machine.hpp: parse_profile), the TOML files
// `--machine FILE` and the profile directories hold. What it accepts keeps machine.hpp's
// promise: every number finite, non-negative and at most 1e9; a mesh of 1 to kMaxMeshNodes nodes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  postbox::sim::Machine m;
  try {
    m = postbox::sim::parse_profile(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.toml");
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
    return 0;
  }
  for (const double v : {m.lambda, m.send_us, m.recv_us, m.L, m.o, m.g, m.G, m.reduce_us_per_byte, m.copy_us_per_byte})
    if (!std::isfinite(v) || v < 0 || v > 1e9) postbox::fuzz::violation("accepted a number outside 0..1e9: " + std::to_string(v));
  if (m.kind == postbox::sim::ModelKind::mesh) {
    std::int64_t nodes = 1;
    for (const int d : m.mesh.dims) {
      if (d < 1) postbox::fuzz::violation("accepted a mesh extent below 1");
      nodes *= d;
      if (nodes > postbox::sim::kMaxMeshNodes) postbox::fuzz::violation("accepted a mesh above kMaxMeshNodes");
    }
  }
  return 0;
}
