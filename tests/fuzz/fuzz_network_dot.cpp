// libFuzzer target: DOT network files (network_file.hpp: parse_network_dot, through graphviz's
// cgraph), what `sim --network-file` reads, and the routes between their first hosts (Routes),
// which a run computes when a message needs them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.hpp"
#include "postbox/emulator/flow_network.hpp"
#include "postbox/frontend/network_file.hpp"
#include "postbox/runtime/check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto topo = postbox::sim::parse_network_dot(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.dot");
    const postbox::sim::Routes routes(topo);
    const int hosts = std::min(topo->hosts(), 6);
    for (int s = 0; s < hosts; ++s)
      for (int d = 0; d < hosts; ++d) {
        try {
          const auto path = routes.route(s, d);
          if (path.size() > topo->node_names.size()) postbox::fuzz::violation("a route longer than the nodes without a loop error");
        } catch (const postbox::InputError& e) {
          postbox::fuzz::one_line(e);
        }
      }
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
  }
  return 0;
}
