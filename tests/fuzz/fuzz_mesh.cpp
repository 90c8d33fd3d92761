// libFuzzer target: mesh specs, both grammars: s2p's "RxC" (s2p.hpp: Mesh::parse, `--mesh` of
// run, plan and sim's s2p) and the emulator's extents "8x8x8" (sim/machine.hpp: parse_dims, `sim
// --mesh`). What either accepts has every side at least 1 and a node count within its bound,
// computed without overflow.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/frontend/selection.hpp"
#include "postbox/emulator/machine.hpp"
#include "postbox/frontend/machines.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = postbox::fuzz::text_of(data, size);
  try {
    const postbox::Mesh m = postbox::parse_mesh(text);
    if (m.rows < 1 || m.cols < 1) postbox::fuzz::violation("accepted a mesh side below 1");
    const std::int64_t p = std::int64_t{m.rows} * m.cols;
    if (p != m.p()) postbox::fuzz::violation("mesh " + std::to_string(m.rows) + "x" + std::to_string(m.cols) + ": p() overflowed");
    const auto snake = postbox::snake_order(m);
    if (static_cast<std::int64_t>(snake.size()) != p) postbox::fuzz::violation("snake_order lost ranks");
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
  }
  try {
    const std::vector<int> dims = postbox::sim::parse_dims(text, "--mesh");
    if (dims.empty() || dims.size() > 6) postbox::fuzz::violation("accepted " + std::to_string(dims.size()) + " extents");
    std::int64_t nodes = 1;
    for (const int d : dims) {
      if (d < 1) postbox::fuzz::violation("accepted an extent below 1");
      nodes *= d;
      if (nodes > postbox::sim::kMaxMeshNodes) postbox::fuzz::violation("accepted a mesh above kMaxMeshNodes");
    }
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
  }
  return 0;
}
