/* Central family: one counter, one release word.
 * Spec: /work/notes/barrier-protocol.md, "Central family"; docs/barrier-models.md. */
#define NW 3
#include "shape.pml"
#include "common.pml"

byte count;

#define PC_C_REL 40     /* completer: release.v = e; signal(release) */

/* waiting: block(release, v >= e) */
#ifndef MUT_OLD_PHASE
#define RELEASE_AT e
#else
#define RELEASE_AT (e - 1)   /* MUT_OLD_PHASE: waits for the phase before */
#endif

/* arrival: n = S.n; c = fetch_add(count, 1, acq_rel) + 1. If c == n: count = 0 (no other
 * thread touches count before the release: same step), COMPLETE(e). Else the arrival is done:
 * arrive_and_wait and arrive_and_reduce wait, arrive() returns (its wait() comes later or
 * never), arrive_and_drop returns. */
inline fam_first_arrival() {
  count++;
  note_arrival();
  if
  :: count == T_n[mymask] -> count = 0; call_complete(PC_C_REL)
  :: else ->
     if
     :: op == OP_WAIT || op == OP_REDUCE -> call_block(W_RELEASE, RELEASE_AT, 1, PC_ENTRY)
     :: op == OP_SPLIT -> pc = PC_WAITCALL
     :: else -> jump(PC_END)
     fi
  fi
}

inline fam_wait_start() {
  call_block(W_RELEASE, RELEASE_AT, 1, PC_ENTRY)
}

proctype rank(byte k) {
  RANK_LOCALS
  do
#include "steps.pml"
  :: atomic { pc == PC_C_REL -> wv[W_RELEASE] = e; call_signal(W_RELEASE, AFTER_COMPLETER) }
  od
}

#include "procs.pml"
