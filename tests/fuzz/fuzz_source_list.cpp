// libFuzzer target: s2p source lists (frontend/selection.hpp: parse_source_list, `--source-list
// 3,17,42`), then the paths that use them: the selection's s2p_sources() on a 64x64 mesh
// (distinct ranks of the mesh) and the library's s2p_request_sources() on what it returns. What
// it accepts is what was typed: the ranks printed back parse to the same list.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/s2p.hpp"
#include "postbox/frontend/selection.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = postbox::fuzz::text_of(data, size);
  std::vector<int> list;
  try {
    list = postbox::parse_source_list(text);
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
    return 0;
  }
  if (list.empty()) postbox::fuzz::violation("accepted an empty source list");
  std::string back;
  for (const int r : list) {
    if (r < 0) postbox::fuzz::violation("accepted rank " + std::to_string(r));
    back += (back.empty() ? "" : ",") + std::to_string(r);
  }
  if (postbox::parse_source_list(back) != list) postbox::fuzz::violation("'" + back + "' parses to another list");
  postbox::PlanRequest req;
  req.op = "s2p";
  req.p = 64 * 64;
  req.mesh = postbox::Mesh{64, 64};
  try {
    req.sources = postbox::s2p_sources(*req.mesh, std::nullopt, std::nullopt, std::nullopt, std::string(text));
    if (req.sources != list) postbox::fuzz::violation("the selection's sources differ from the parsed list");
    if (postbox::s2p_request_sources(req, postbox::s2p_request_mesh(req)) != list)
      postbox::fuzz::violation("the library refused or changed the selection's sources");
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
  }
  return 0;
}
