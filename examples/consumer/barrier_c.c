/* Built by tests/install_consumer.cmake with a plain C compiler and pkg-config only:
 *   cc barrier_c.c $(pkg-config --cflags --libs postbox-barrier)
 * and, from a prefix outside the system's library directories:
 *   cc barrier_c.c $(pkg-config --cflags --libs postbox-barrier) -Wl,-rpath,$(pkg-config --variable=libdir postbox-barrier)
 * Also built by examples/consumer-c (CMake, a C-only project).
 * Four pthreads meet at a postbox barrier 1000 times; after each phase every thread checks
 * that all four had counted themselves in it. */
#include <postbox/barrier.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

enum { P = 4, PHASES = 1000 };

static postbox_barrier_t* barrier;
static atomic_int arrived[PHASES];
static atomic_int wrong;

static void* rank_main(void* arg) {
  const int rank = (int)(long)arg;
  for (int i = 0; i < PHASES; ++i) {
    atomic_fetch_add(&arrived[i], 1);
    if (postbox_barrier_wait(barrier, rank) != 0) atomic_fetch_add(&wrong, 1);
    if (atomic_load(&arrived[i]) != P) atomic_fetch_add(&wrong, 1);
  }
  return NULL;
}

int main(void) {
  barrier = postbox_barrier_create(P, "default");
  if (barrier == NULL) {
    printf("postbox_barrier_create failed\n");
    return 1;
  }
  pthread_t threads[P];
  for (long r = 0; r < P; ++r) pthread_create(&threads[r], NULL, rank_main, (void*)r);
  for (int r = 0; r < P; ++r) pthread_join(threads[r], NULL);
  const int bad = atomic_load(&wrong);
  printf("barrier_c: %d threads, %d phases via %s: %s\n", P, PHASES, postbox_barrier_algorithm(barrier),
         bad == 0 ? "every phase complete" : "WRONG");
  postbox_barrier_destroy(barrier);
  return bad == 0 ? 0 : 1;
}
