/* The processes besides the ranks: abort(), the end-of-run check, and init. Each family file
 * includes this last. */

/* abort(): aborted = true; every Word's seq += 1 and futex_wake. One step: a waiter either
 * reads aborted == true in block() or loaded seq before, and then the bump wakes it; bumping
 * the words one by one only delays wake-ups, which the scheduler can do anyway. The skip
 * branch is the run without abort. */
proctype aborter() {
  byte w = 1;
  if
  :: d_step {
       aborted = 1;
#ifndef MUT_ABORT_NO_WAKE
       do
       :: w < NW -> bump(w); w++
       :: else -> break
       od;
#endif
       w = 0
     }
  :: skip
  fi
}

/* Property 2, "exactly once": when nothing can move any more (every rank ended, or a deadlock
 * that SPIN reports as an invalid end state anyway), each phase that every participant reached
 * had its completion step, unless abort() came. */
proctype monitor() {
  byte ph = 1;
end_idle:
  timeout;
  d_step {
    do
    :: ph <= PH ->
       participants(ph, g_n);
       assert(aborted || !NEEDED(ph) || g_n == 0 || g_arrived[ph] != g_n || g_started[ph] == 1);
       ph++
    :: else -> break
    od;
    g_n = 0
  }
}

init {
  byte i;
  shape_init();
  atomic {
#if SPECIAL < P
    do
    :: i < P ->
       if
       :: ((g_smask & 1) + ((g_smask >> 1) & 1) + ((g_smask >> 2) & 1) + ((g_smask >> 3) & 1)) < SPECIAL ->
          g_smask = g_smask | (1 << i)
       :: true
       fi;
       i++
    :: else -> break
    od;
    i = 0;
#endif
    cur_mask = (1 << P) - 1;
    g_i = 0;
    do
    :: g_i < P -> run rank(g_i); g_i++
    :: else -> break
    od;
    g_i = 0;
    run monitor();
#if ABORT
    run aborter()
#endif
  }
}
