// `postbox run` under mpirun: one job across the processes (docs/cluster.md). Built only with
// MPI (POSTBOX_HAVE_MPI). Every process of the job agrees on its arguments exactly once, with
// one collective (cluster::agree), before anything runs: a process whose arguments were refused
// takes part with its error, so the job ends with one line and exit 2 instead of a hang.
#pragma once

#ifdef POSTBOX_HAVE_MPI

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>

namespace postbox::cli::mpi {

// Starts MPI (MPI_THREAD_MULTIPLE) when this process was started by an MPI launcher and the
// command runs across processes (`run`); finalises it at destruction.
class Scope {
 public:
  Scope(int* argc, char*** argv);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

// True while a Scope started MPI for this command.
bool active();
int process();
int processes();

// The success path's agreement: throws InputError with the agreed message (every process
// alike) when some process had an error or different arguments.
void agree(const std::string& fingerprint);

// An error on this process: before the agreement, it takes part in it and returns the line to
// print (process 0 prints, the others print nothing: empty); after the agreement (an error
// while the job runs) it prints the line naming this process and ends the job (MPI_Abort, 2).
std::string fail(const std::string& message);

// The end of a command that never reached the agreement (--help, --list): takes part in it.
// Returns the agreed error to print on process 0, if any.
std::optional<std::string> settle(const std::string& fingerprint);

}  // namespace postbox::cli::mpi

#endif
