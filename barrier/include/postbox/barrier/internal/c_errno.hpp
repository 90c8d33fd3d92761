// The C APIs' errno mapping (postbox/barrier.h, postbox/cluster/barrier.h): one rule for both.
// Internal: not part of the installed API's contract.
#pragma once

#include <cerrno>
#include <exception>
#include <new>

#include "postbox/barrier/barrier.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::internal {

// A create function's body: its result, or nullptr with errno set as the C headers say
// (EINVAL for bad input, ENOMEM out of memory, EFAULT for anything else).
template <class Make>
auto c_create(Make&& make) noexcept -> decltype(make()) {
  try {
    return make();
  } catch (const InputError&) {
    errno = EINVAL;
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
  } catch (...) {
    errno = EFAULT;
  }
  return nullptr;
}

// A wait function's body: 0, ECANCELED for a broken barrier, EFAULT for anything else.
template <class Wait>
int c_wait(Wait&& wait) noexcept {
  try {
    wait();
    return 0;
  } catch (const BarrierBroken&) {
    return ECANCELED;
  } catch (...) {
    return EFAULT;
  }
}

}  // namespace postbox::internal
