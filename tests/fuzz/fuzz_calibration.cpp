// libFuzzer target: calibration JSON (calibrate.hpp: parse_calibration, what load_calibration
// reads from the cache). What it accepts keeps the documented ranges and exports back unchanged.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.hpp"
#include "postbox/runtime/calibrate.hpp"
#include "postbox/runtime/check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  postbox::Calibration c;
  try {
    c = postbox::parse_calibration(text, "calibration file fuzz.json");
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
    return 0;
  }
  if (!(c.s_ns > 0) || !(c.r_ns >= 0) || !(c.lambda >= 1) || !std::isfinite(c.s_ns) || !std::isfinite(c.r_ns))
    postbox::fuzz::violation("accepted s_ns, r_ns or lambda outside their ranges");
  postbox::fuzz::same_where_given(nlohmann::json::parse(text), nlohmann::json::parse(postbox::calibration_json(c)),
                                  "calibration");
  return 0;
}
