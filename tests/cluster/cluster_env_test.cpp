// MpiEnvironment under mpirun: every process sees the launcher, MPI_THREAD_MULTIPLE, and the same
// world size; the ranks are 0..size-1, each once (an allreduce of 2^rank sums to 2^size - 1).
// With --expect-singleton (started without mpirun): launched_by_mpi() is false.
#include <cstdio>
#include <cstring>

#include "postbox/cluster/mpi_env.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--expect-singleton") == 0) {
    if (postbox::cluster::launched_by_mpi()) {
      std::fprintf(stderr, "launched_by_mpi() is true without mpirun\n");
      return 1;
    }
    return 0;
  }
  if (!postbox::cluster::launched_by_mpi()) {
    std::fprintf(stderr, "launched_by_mpi() is false under mpirun\n");
    return 1;
  }
  postbox::cluster::MpiEnvironment env(&argc, &argv);
  long mine = 1L << env.rank(), sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (sum != (1L << env.size()) - 1) {
    std::fprintf(stderr, "rank %d: ranks are not 0..%d once each (sum %ld)\n", env.rank(), env.size() - 1, sum);
    return 1;
  }
  return 0;
}
