// MPI start-up for postbox::cluster.
//
// launched_by_mpi(): true when this process was started by an MPI launcher (mpirun/mpiexec of
// Open MPI, MPICH's Hydra, or PMIx), read from the launcher's environment variables; the CLI uses
// it to decide whether a command runs across processes. It never initialises MPI.
//
// MpiEnvironment: initialises MPI with MPI_THREAD_MULTIPLE (docs/cluster.md says why) unless
// MPI is already initialised, and finalises it on destruction if it initialised it. A library
// that provides less than MPI_THREAD_MULTIPLE → std::runtime_error naming the level it provides.
#pragma once

#include <mpi.h>

namespace postbox::cluster {

[[nodiscard]] bool launched_by_mpi() noexcept;

// A barrier over comm whose waiting sleeps (MPI_Ibarrier, then MPI_Test after sleeps that double
// from 50 µs to 5 ms, so a waiter wakes at most 200 times a second once it has waited): processes
// that have nothing to do while others measure leave the cores alone (calibrate_mpi, bench).
void sleeping_barrier(MPI_Comm comm);

// This process's place among the processes of comm that share its node (one shared-memory
// domain, MPI_COMM_TYPE_SHARED): how many there are, its index among them, and the lowest rank
// in comm among them (which names the node). Collective over comm.
struct NodeShare {
  int processes = 1;
  int index = 0;
  int leader = 0;
};
[[nodiscard]] NodeShare node_share(MPI_Comm comm);

// node_share(comm).processes. Collective over comm.
[[nodiscard]] int processes_on_node(MPI_Comm comm);

class MpiEnvironment {
 public:
  MpiEnvironment(int* argc, char*** argv);
  MpiEnvironment();
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }

 private:
  bool owns_ = false;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace postbox::cluster
