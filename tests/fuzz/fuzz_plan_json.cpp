// libFuzzer target: plan JSON (plan_export.hpp: plan_from_json), what `run --file` and
// `plan check --file` read. A plan it accepts exports back to the same fields (lossless).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.hpp"
#include "postbox/runtime/check.hpp"
#include "postbox/frontend/plan_export.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  postbox::Plan plan;
  try {
    plan = postbox::plan_from_json(text);
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
    return 0;
  }
  const std::string exported = postbox::plan_to_json(plan);
  postbox::fuzz::same_where_given(nlohmann::json::parse(text), nlohmann::json::parse(exported), "plan");
  if (postbox::plan_to_json(postbox::plan_from_json(exported)) != exported) postbox::fuzz::violation("export is not lossless");
  return 0;
}
