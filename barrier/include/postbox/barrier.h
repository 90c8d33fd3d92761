/* C interface to the postbox barriers, for C and Fortran (bind(C)) callers.
 *
 * Any p threads, created by whoever, call postbox_barrier_wait() with distinct ranks 0..p-1;
 * each call returns once all p have called it for this phase. Memory ordering: everything a
 * thread did before calling postbox_barrier_wait() is visible to every thread after its call
 * returns.
 *
 * Return codes are errno values (<errno.h>):
 *   0          success;
 *   EINVAL     bad argument: a NULL barrier, a rank outside 0..p-1, p < 1, an unknown algorithm;
 *   ECANCELED  the barrier is broken (a completion function threw; not reachable from C, which
 *              installs none, but kept for wrappers);
 *   ENOMEM     out of memory (create only);
 *   EFAULT     any other internal failure.
 * Library misuse that C cannot report through a return value (two threads using one rank at
 * once) aborts with a file:line message, as in C++.
 */
#ifndef POSTBOX_BARRIER_H
#define POSTBOX_BARRIER_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct postbox_barrier postbox_barrier_t;

/* A barrier for p threads. algorithm: "default" (or NULL), "fibo", "combine", "central",
 * "dissemination", "mcs", "tournament" or "hier". Returns NULL and sets errno (EINVAL, ENOMEM,
 * EFAULT) on failure. */
postbox_barrier_t* postbox_barrier_create(int p, const char* algorithm);

/* Arrive as `rank` and wait for the other participants. Returns 0 or an errno value above. */
int postbox_barrier_wait(postbox_barrier_t* barrier, int rank);

/* The algorithm in use ("central", "combine", ...); NULL for a NULL barrier. */
const char* postbox_barrier_algorithm(const postbox_barrier_t* barrier);

/* Frees the barrier; NULL is ignored. No thread may be inside it. */
void postbox_barrier_destroy(postbox_barrier_t* barrier);

#ifdef __cplusplus
}
#endif

#endif /* POSTBOX_BARRIER_H */
