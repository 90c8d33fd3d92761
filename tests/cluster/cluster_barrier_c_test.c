/* The C API of the barrier across processes, compiled as C: create from an MPI_Comm and a thread
 * count, wait from T threads, bad arguments → EINVAL (T differing across processes: on every
 * process), destroy. Run under mpirun; exit 0 when every process passed. */
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "postbox/cluster/barrier.h"

#define T 2
#define PHASES 50

static postbox_cluster_barrier_t* barrier;
static int counts[T];
static int failures;

static void* body(void* arg) {
  int t = *(int*)arg;
  for (int k = 0; k < PHASES; ++k) {
    if (postbox_cluster_barrier_wait(barrier, t) != 0) __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
    counts[t]++;
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int bad = 0;
  errno = 0;
  if (postbox_cluster_barrier_create(MPI_COMM_WORLD, rank == 0 ? T + 1 : T, NULL) != NULL || errno != EINVAL) {
    fprintf(stderr, "process %d: differing thread counts were accepted\n", rank);
    bad = 1;
  }
  if (postbox_cluster_barrier_create(MPI_COMM_WORLD, 0, NULL) != NULL || errno != EINVAL) {
    fprintf(stderr, "process %d: T = 0 was accepted\n", rank);
    bad = 1;
  }
  barrier = postbox_cluster_barrier_create(MPI_COMM_WORLD, T, "default");
  if (barrier == NULL || postbox_cluster_barrier_size(barrier) != size * T) {
    fprintf(stderr, "process %d: create failed or size wrong\n", rank);
    bad = 1;
  } else {
    if (postbox_cluster_barrier_wait(barrier, T) != EINVAL || postbox_cluster_barrier_wait(NULL, 0) != EINVAL) {
      fprintf(stderr, "process %d: a bad thread index was accepted\n", rank);
      bad = 1;
    }
    pthread_t th;
    int ids[T] = {0, 1};
    pthread_create(&th, NULL, body, &ids[1]);
    body(&ids[0]);
    pthread_join(th, NULL);
    if (failures != 0 || counts[0] != PHASES || counts[1] != PHASES) bad = 1;
    postbox_cluster_barrier_destroy(barrier);
  }
  postbox_cluster_barrier_destroy(NULL);
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
