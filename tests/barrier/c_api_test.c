/* Tests for postbox/barrier.h, compiled as C: every algorithm from plain pthreads, and the
 * documented error codes. Returns the number of failures. */
#include "postbox/barrier.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifdef POSTBOX_TSAN
enum { kEpisodes = 100 };
#else
enum { kEpisodes = 2000 };
#endif
enum { kThreads = 5 };

struct shared {
  postbox_barrier_t* barrier;
  int cell[2][kThreads];
  int failures[kThreads];
};

struct arg {
  struct shared* s;
  int rank;
};

static void* rank_main(void* p) {
  struct arg* a = (struct arg*)p;
  struct shared* s = a->s;
  for (int k = 0; k < kEpisodes; ++k) {
    s->cell[k % 2][a->rank] = k;
    if (postbox_barrier_wait(s->barrier, a->rank) != 0) ++s->failures[a->rank];
    for (int j = 0; j < kThreads; ++j) {
      if (s->cell[k % 2][j] != k) ++s->failures[a->rank];
    }
  }
  return NULL;
}

static int run_algorithm(const char* name) {
  struct shared s;
  memset(&s, 0, sizeof s);
  s.barrier = postbox_barrier_create(kThreads, name);
  if (s.barrier == NULL) {
    fprintf(stderr, "c_api_test: create(%s) failed, errno %d\n", name ? name : "NULL", errno);
    return 1;
  }
  pthread_t threads[kThreads];
  struct arg args[kThreads];
  for (int r = 0; r < kThreads; ++r) {
    args[r].s = &s;
    args[r].rank = r;
    pthread_create(&threads[r], NULL, rank_main, &args[r]);
  }
  int failures = 0;
  for (int r = 0; r < kThreads; ++r) {
    pthread_join(threads[r], NULL);
    failures += s.failures[r];
  }
  if (failures != 0) fprintf(stderr, "c_api_test: %s: %d failures\n", name ? name : "NULL", failures);
  if (postbox_barrier_algorithm(s.barrier) == NULL) ++failures;
  postbox_barrier_destroy(s.barrier);
  return failures;
}

int postbox_c_api_test(void) {
  static const char* const names[] = {NULL, "default", "fibo", "combine", "central", "dissemination", "mcs", "tournament", "hier"};
  int failures = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) failures += run_algorithm(names[i]);

  errno = 0;
  if (postbox_barrier_create(0, "central") != NULL || errno != EINVAL) {
    fprintf(stderr, "c_api_test: create(0) must fail with EINVAL\n");
    ++failures;
  }
  errno = 0;
  if (postbox_barrier_create(2, "fastest") != NULL || errno != EINVAL) {
    fprintf(stderr, "c_api_test: create with an unknown algorithm must fail with EINVAL\n");
    ++failures;
  }
  if (postbox_barrier_wait(NULL, 0) != EINVAL) ++failures;
  postbox_barrier_t* b = postbox_barrier_create(1, "central");
  if (b == NULL || postbox_barrier_wait(b, 1) != EINVAL || postbox_barrier_wait(b, -1) != EINVAL ||
      postbox_barrier_wait(b, 0) != 0) {
    fprintf(stderr, "c_api_test: rank checks failed\n");
    ++failures;
  }
  if (b != NULL && strcmp(postbox_barrier_algorithm(b), "central") != 0) ++failures;
  postbox_barrier_destroy(b);
  postbox_barrier_destroy(NULL);
  if (postbox_barrier_algorithm(NULL) != NULL) ++failures;
  return failures;
}
