// MpiEnvironment under mpirun: every process sees the launcher, MPI_THREAD_MULTIPLE, and the same
// world size; the ranks are 0..size-1, each once (an allreduce of 2^rank sums to 2^size - 1).
// node_share(): every test process runs on one node, so over the world and over the world in
// reverse order (MPI_Comm_split with key −rank) each process is one of size processes, its index
// is its rank in that communicator, the leader is rank 0 of it, and processes_on_node() agrees.
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
  MPI_Comm reversed = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, 0, -env.rank(), &reversed);
  for (MPI_Comm comm : {MPI_COMM_WORLD, reversed}) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const postbox::cluster::NodeShare n = postbox::cluster::node_share(comm);
    if (n.processes != size || n.index != rank || n.leader != 0 || postbox::cluster::processes_on_node(comm) != size) {
      std::fprintf(stderr, "rank %d of %d: node_share says %d processes, index %d, leader %d\n", rank, size,
                   n.processes, n.index, n.leader);
      return 1;
    }
  }
  MPI_Comm_free(&reversed);
  return 0;
}
