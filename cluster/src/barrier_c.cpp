#include "postbox/cluster/barrier.h"

#include <cerrno>
#include <memory>

#include "postbox/barrier/internal/c_errno.hpp"
#include "postbox/cluster/barrier.hpp"

struct postbox_cluster_barrier {
  std::unique_ptr<postbox::cluster::ClusterBarrier> impl;
};

extern "C" {

postbox_cluster_barrier_t* postbox_cluster_barrier_create(MPI_Comm comm, int threads, const char* algorithm) {
  return postbox::internal::c_create([&] {
    auto b = std::make_unique<postbox_cluster_barrier>();
    postbox::cluster::ClusterBarrierOptions options;
    options.intra_algorithm = algorithm == nullptr ? "default" : algorithm;
    b->impl = std::make_unique<postbox::cluster::ClusterBarrier>(comm, threads, std::move(options));
    return b.release();
  });
}

int postbox_cluster_barrier_wait(postbox_cluster_barrier_t* barrier, int thread) {
  if (barrier == nullptr || thread < 0 || thread >= barrier->impl->threads()) return EINVAL;
  return postbox::internal::c_wait([&] { barrier->impl->arrive_and_wait(thread); });
}

int postbox_cluster_barrier_size(const postbox_cluster_barrier_t* barrier) {
  return barrier == nullptr ? -1 : barrier->impl->size();
}

void postbox_cluster_barrier_destroy(postbox_cluster_barrier_t* barrier) { delete barrier; }

}  // extern "C"
