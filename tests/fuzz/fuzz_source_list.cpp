// libFuzzer target: s2p source lists (s2p.hpp: parse_source_list, `--source-list 3,17,42`), then
// the request path that uses them (s2p_request_sources on a 64x64 mesh: distinct ranks of the
// mesh). What it accepts is what was typed: the ranks printed back parse to the same list.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "postbox/collectives/plans.hpp"
#include "postbox/collectives/s2p.hpp"

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
  req.params["mesh"] = "64x64";
  req.params["source-list"] = std::string(text);
  try {
    const auto sources = postbox::s2p_request_sources(req, postbox::s2p_request_mesh(req));
    if (sources != list) postbox::fuzz::violation("the request's sources differ from the parsed list");
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
  }
  return 0;
}
