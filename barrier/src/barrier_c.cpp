#include "postbox/barrier.h"

#include <cerrno>
#include <memory>

#include "postbox/barrier/barrier.hpp"
#include "postbox/barrier/internal/c_errno.hpp"

struct postbox_barrier {
  std::unique_ptr<postbox::AnyBarrier> impl;
};

extern "C" {

postbox_barrier_t* postbox_barrier_create(int p, const char* algorithm) {
  return postbox::internal::c_create([&] {
    auto b = std::make_unique<postbox_barrier>();
    b->impl = postbox::make_barrier(algorithm == nullptr ? "default" : algorithm, p);
    return b.release();
  });
}

int postbox_barrier_wait(postbox_barrier_t* barrier, int rank) {
  if (barrier == nullptr || rank < 0 || rank >= barrier->impl->size()) return EINVAL;
  return postbox::internal::c_wait([&] { barrier->impl->arrive_and_wait(rank); });
}

const char* postbox_barrier_algorithm(const postbox_barrier_t* barrier) {
  return barrier == nullptr ? nullptr : barrier->impl->algorithm();
}

void postbox_barrier_destroy(postbox_barrier_t* barrier) { delete barrier; }

}  // extern "C"
