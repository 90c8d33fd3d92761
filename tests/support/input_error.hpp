// The message a call refuses its input with, for tests that pin error wording.
#pragma once

#include <string>

#include "postbox/runtime/check.hpp"

namespace postbox::testing_support {

// The message of the InputError that f() throws, or "(no error)" when it returns normally.
template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace postbox::testing_support
