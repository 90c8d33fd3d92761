/* Built by tests/install_consumer.cmake: the C API inside an OpenMP parallel region. Each
 * thread of the team is one rank (omp_get_thread_num()); a phase's writes are read by the next
 * thread after the barrier. */
#include <omp.h>
#include <postbox/barrier.h>

#include <stdio.h>

enum { P = 4, PHASES = 1000 };

int main(void) {
  postbox_barrier_t* barrier = postbox_barrier_create(P, "default");
  if (barrier == NULL) return 1;
  static int value[P];
  int wrong = 0;
#pragma omp parallel num_threads(P) reduction(+ : wrong)
  {
    const int rank = omp_get_thread_num();
    for (int i = 0; i < PHASES; ++i) {
      value[rank] = i;
      postbox_barrier_wait(barrier, rank);
      wrong += value[(rank + 1) % P] != i;
      postbox_barrier_wait(barrier, rank);
    }
  }
  printf("barrier_omp: %d OpenMP threads, %d phases via %s: %s\n", P, PHASES, postbox_barrier_algorithm(barrier),
         wrong == 0 ? "every phase complete" : "WRONG");
  postbox_barrier_destroy(barrier);
  return wrong == 0 ? 0 : 1;
}
