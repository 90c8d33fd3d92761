// libFuzzer target: hwloc synthetic descriptions (topology.hpp: Topology::synthetic, `topo
// --synthetic`, `tree --synthetic`). hwloc loads them in a child process with a 10 s deadline
// (topology.cpp); this target checks postbox's side: the bound on PUs, the walk, a placement.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "postbox/runtime/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const postbox::Topology t = postbox::Topology::synthetic(postbox::fuzz::text_of(data, size));
    if (t.pus() < 1) postbox::fuzz::violation("accepted a topology without PUs");
    if (static_cast<std::uint64_t>(t.pus()) > postbox::Topology::kMaxSyntheticPus)
      postbox::fuzz::violation("accepted " + std::to_string(t.pus()) + " PUs, above kMaxSyntheticPus");
    for (int i = 0; i < t.pus(); ++i) (void)t.pu(i);
    (void)t.place(postbox::Placement::scatter(), t.pus());
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
  }
  return 0;
}
