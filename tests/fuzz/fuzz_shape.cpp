// libFuzzer target: tree shape names (tree.hpp: ShapeSpec::parse), the text of `tree --shape`
// and of --algo for tree plans. What it accepts has a name() that parses back to the same name.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "postbox/collectives/tree.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  postbox::ShapeSpec spec;
  try {
    spec = postbox::ShapeSpec::parse(postbox::fuzz::text_of(data, size));
  } catch (const postbox::InputError& e) {
    postbox::fuzz::one_line(e);
    return 0;
  }
  if (spec.kind == postbox::ShapeSpec::Kind::kary && (spec.k < 1 || spec.k > postbox::kMaxKaryDegree))
    postbox::fuzz::violation("accepted kary:" + std::to_string(spec.k));
  if (spec.alpha && (*spec.alpha <= postbox::Rational(0) || *spec.alpha >= postbox::Rational(1)))
    postbox::fuzz::violation("accepted alpha " + spec.alpha->str() + " outside (0, 1)");
  const std::string name = spec.name();
  std::string again;
  try {
    again = postbox::ShapeSpec::parse(name).name();
  } catch (const postbox::InputError& e) {
    postbox::fuzz::violation("name() '" + name + "' does not parse: " + e.what());
  }
  if (again != name) postbox::fuzz::violation("name() '" + name + "' parses back as '" + again + "'");
  return 0;
}
