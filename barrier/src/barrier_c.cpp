#include "postbox/barrier.h"

#include <cerrno>
#include <exception>
#include <memory>
#include <new>

#include "postbox/barrier/barrier.hpp"
#include "postbox/runtime/check.hpp"

struct postbox_barrier {
  std::unique_ptr<postbox::AnyBarrier> impl;
};

extern "C" {

postbox_barrier_t* postbox_barrier_create(int p, const char* algorithm) {
  try {
    auto b = std::make_unique<postbox_barrier>();
    b->impl = postbox::make_barrier(algorithm == nullptr ? "default" : algorithm, p);
    return b.release();
  } catch (const postbox::InputError&) {
    errno = EINVAL;
  } catch (const std::bad_alloc&) {
    errno = ENOMEM;
  } catch (...) {
    errno = EFAULT;
  }
  return nullptr;
}

int postbox_barrier_wait(postbox_barrier_t* barrier, int rank) {
  if (barrier == nullptr || rank < 0 || rank >= barrier->impl->size()) return EINVAL;
  try {
    barrier->impl->arrive_and_wait(rank);
    return 0;
  } catch (const postbox::BarrierBroken&) {
    return ECANCELED;
  } catch (...) {
    return EFAULT;
  }
}

const char* postbox_barrier_algorithm(const postbox_barrier_t* barrier) {
  return barrier == nullptr ? nullptr : barrier->impl->algorithm();
}

void postbox_barrier_destroy(postbox_barrier_t* barrier) { delete barrier; }

}  // extern "C"
