// How a thread waits for MPI (cluster/src only): MPI has no wake-up to block on, so a waiter
// polls (each test drives MPI's progress). Between polls it spins, as Open MPI's own blocking
// calls do, unless the node is oversubscribed: then, after 64 polls, it yields the core before
// each poll (Open MPI's mpi_yield_when_idle, which mpirun sets when it oversubscribes). A yield
// on a node that other programs load gives the core away for their whole time slice, which is
// why a waiter that fits the CPUs never yields. One rule for the job's ranks (job.cpp) and the
// barrier's leaders' step (barrier.cpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <thread>

#include "postbox/cluster/mpi_env.hpp"
#include "postbox/runtime/wait.hpp"

namespace postbox::cluster::internal {

// True when the threads of this node's processes (threads per process × the processes of comm
// that share this node) outnumber `cpus`: a spinning poller would then hold the core a sender
// needs. Collective over comm.
inline bool node_oversubscribed(MPI_Comm comm, int threads, unsigned cpus) {
  return static_cast<long long>(processes_on_node(comm)) * threads > static_cast<long long>(cpus);
}

// One wait: call pause() after each poll that found nothing.
class MpiPoll {
 public:
  explicit MpiPoll(bool oversubscribed) noexcept : yield_(oversubscribed) {}
  void pause() {
    if (yield_ && ++polls_ > 64) {
      std::this_thread::yield();
    } else {
      cpu_relax();
    }
  }

 private:
  bool yield_;
  int polls_ = 0;
};

}  // namespace postbox::cluster::internal
