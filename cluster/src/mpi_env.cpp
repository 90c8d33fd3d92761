#include "postbox/cluster/mpi_env.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <stdexcept>
#include <string>

namespace postbox::cluster {
namespace {

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown level";
  }
}

}  // namespace

bool launched_by_mpi() noexcept {
  // Open MPI's mpirun, PMIx launchers (Open MPI 5, Slurm), MPICH's Hydra.
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    const char* s = std::getenv(v);
    if (s != nullptr && *s != '\0') return true;
  }
  return false;
}

NodeShare node_share(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  NodeShare n;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(node, &n.processes);
  MPI_Comm_rank(node, &n.index);
  MPI_Allreduce(&rank, &n.leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  return n;
}

int processes_on_node(MPI_Comm comm) { return node_share(comm).processes; }

void sleeping_barrier(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Ibarrier(comm, &req);
  // The sleep doubles from 50 µs to 5 ms: a waiter that woke every 200 µs took the core from
  // the measurement (calibrate --mpi's intra-process runs failed as too noisy).
  auto pause = std::chrono::microseconds(50);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done != 0) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

MpiEnvironment::MpiEnvironment() : MpiEnvironment(nullptr, nullptr) {}

MpiEnvironment::MpiEnvironment(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized == 0) {
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    owns_ = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    if (owns_) MPI_Finalize();
    throw std::runtime_error(std::string("postbox::cluster needs MPI_THREAD_MULTIPLE; this MPI provides ") +
                             level_name(provided));
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiEnvironment::~MpiEnvironment() {
  if (!owns_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) MPI_Finalize();
}

}  // namespace postbox::cluster
