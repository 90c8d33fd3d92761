// The MPI+OpenMP competitor of `postbox bench cluster` (cluster_bench.hpp): its own translation
// unit, compiled with OpenMP (libgomp shares the process with postbox's threads; only libgomp and
// LLVM's libomp cannot share one, which the barrier bench's helpers are about).
#include <chrono>
#include <cmath>

#include "cluster_bench.hpp"

namespace postbox::bench {

#ifdef _OPENMP
bool have_openmp() { return true; }

double omp_hybrid_batch(MPI_Comm comm, int threads, int iters, const std::function<void(MPI_Comm)>& op) {
  double elapsed = 0;
#pragma omp parallel num_threads(threads)
  {
    std::chrono::steady_clock::time_point start;
    for (int i = -10; i < iters; ++i) {
      if (i == 0) {
#pragma omp master
        start = std::chrono::steady_clock::now();
      }
#pragma omp barrier
#pragma omp master
      op(comm);
#pragma omp barrier
    }
#pragma omp master
    elapsed = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  }
  return elapsed;
}
#else
bool have_openmp() { return false; }
double omp_hybrid_batch(MPI_Comm, int, int, const std::function<void(MPI_Comm)>&) { return std::nan(""); }
#endif

}  // namespace postbox::bench
