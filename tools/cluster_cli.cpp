#include "cluster_cli.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "postbox/cluster/job.hpp"
#include "postbox/cluster/mpi_env.hpp"
#include "postbox/runtime/check.hpp"

namespace postbox::cli::mpi {
namespace {

std::unique_ptr<cluster::MpiEnvironment> g_env;
enum class Agreement { pending, agreed, refused };
Agreement g_state = Agreement::pending;

}  // namespace

Scope::Scope(int* argc, char*** argv) {
  g_state = Agreement::pending;
  if (!cluster::launched_by_mpi() || *argc < 2 || std::strcmp((*argv)[1], "run") != 0) return;
  g_env = std::make_unique<cluster::MpiEnvironment>(argc, argv);
}

Scope::~Scope() { g_env.reset(); }

bool active() { return g_env != nullptr; }
int process() { return g_env ? g_env->rank() : 0; }
int processes() { return g_env ? g_env->size() : 1; }

void agree(const std::string& fingerprint) {
  PB_CHECK(active() && g_state == Agreement::pending, "mpi::agree: once, under mpirun");
  if (const auto problem = cluster::agree(MPI_COMM_WORLD, std::nullopt, fingerprint)) {
    g_state = Agreement::refused;
    throw InputError(*problem);
  }
  g_state = Agreement::agreed;
}

std::string fail(const std::string& message) {
  switch (g_state) {
    case Agreement::pending: {
      g_state = Agreement::refused;
      const auto agreed = cluster::agree(MPI_COMM_WORLD, message, "");
      return process() == 0 ? agreed.value_or(message) : std::string();
    }
    case Agreement::refused:  // the agreed message, thrown by agree() on every process
      return process() == 0 ? message : std::string();
    case Agreement::agreed:
      break;
  }
  std::fflush(stdout);
  std::fprintf(stderr, "postbox: error: process %d: %s\n", process(), message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::abort();  // MPI_Abort does not return
}

std::optional<std::string> settle(const std::string& fingerprint) {
  if (!active() || g_state != Agreement::pending) return std::nullopt;
  g_state = Agreement::agreed;
  auto agreed = cluster::agree(MPI_COMM_WORLD, std::nullopt, fingerprint);
  if (agreed && process() != 0) return std::string();
  return agreed;
}

}  // namespace postbox::cli::mpi
