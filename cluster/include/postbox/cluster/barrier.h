/* C interface to the barrier across processes (postbox/cluster/barrier.hpp), for C and Fortran
 * (bind(C)) callers of an MPI job: P processes × T threads, global rank process·T + thread.
 *
 * postbox_cluster_barrier_create() is collective over comm: every process calls it with the same
 * thread count. Then in each process T threads, created by whoever, call
 * postbox_cluster_barrier_wait() with distinct thread indices 0..T-1; each call returns once all
 * P·T have called it for this phase. Memory ordering: as barrier.hpp's (within a process,
 * everything a thread did before the call is visible to every thread after it returns; across
 * processes, for memory they share).
 *
 * Return codes are errno values (<errno.h>):
 *   0          success;
 *   EINVAL     bad argument: a NULL barrier, a thread outside 0..T-1, T < 1, T differing between
 *              the processes (every process gets EINVAL), an unknown algorithm;
 *   ECANCELED  the barrier is broken (kept for wrappers; C installs no completion function);
 *   ENOMEM     out of memory (create only);
 *   EFAULT     any other internal failure.
 * Library misuse that C cannot report through a return value (two threads using one thread
 * index at once) aborts with a file:line message, as in C++. MPI must be initialised with
 * MPI_THREAD_MULTIPLE.
 */
#ifndef POSTBOX_CLUSTER_BARRIER_H
#define POSTBOX_CLUSTER_BARRIER_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct postbox_cluster_barrier postbox_cluster_barrier_t;

/* A barrier over comm's processes × `threads` threads each; the intra-process barrier is
 * `algorithm` ("default" or NULL, "fibo", "combine", ... as postbox_barrier_create). Collective.
 * Returns NULL and sets errno (EINVAL, ENOMEM, EFAULT) on failure. */
postbox_cluster_barrier_t* postbox_cluster_barrier_create(MPI_Comm comm, int threads, const char* algorithm);

/* Arrive as `thread` of this process and wait for every thread of every process. Returns 0 or an
 * errno value above. */
int postbox_cluster_barrier_wait(postbox_cluster_barrier_t* barrier, int thread);

/* P·T; -1 for a NULL barrier. */
int postbox_cluster_barrier_size(const postbox_cluster_barrier_t* barrier);

/* Frees the barrier; NULL is ignored. No thread may be inside it. */
void postbox_cluster_barrier_destroy(postbox_cluster_barrier_t* barrier);

#ifdef __cplusplus
}
#endif

#endif /* POSTBOX_CLUSTER_BARRIER_H */
