/* Tree family (fibo, mcs, tournament, hier): combining arrival, wake-up with proxies.
 * Spec: /work/notes/barrier-protocol.md, "Tree family"; docs/barrier-models.md.
 * The shape comes from shape.pml (pb_model_shapes ALGORITHM P): per set of participants, the
 * arrival nodes (entry node per index, target and next node per node: per-node counters, or
 * tournament matches) and the wake-up children in send order. */
#define NW (3 + P)
/* A present rank woke: if wake[k] == W(e,1) (as block's last load saw it): forward(k). Then it
 * leaves. */
#define BLOCK_RETURN \
  if \
  :: brp == PC_T_DUTY && wv[bsw] == W1(e) -> \
     bsw = 0; btv = 0; brp = 0; fsp = 0; fwd_push(idx); frp = PC_ENTRY; fwd_continue() \
  :: brp == PC_T_DUTY && wv[bsw] != W1(e) -> bsw = 0; btv = 0; brp = 0; jump(PC_ENTRY) \
  :: else -> BLOCK_DONE \
  fi
#include "shape.pml"
#include "common.pml"

byte cnt[4];                /* combining counters, one per arrival node */
#define W_WAKE(r) (3 + (r)) /* wake[r].v = W(e, d) = 2e + d (d: the duty to forward) */
#define W0(ph) (2 * (ph))
#define W1(ph) (2 * (ph) + 1)

#define PC_T_ARR   40       /* arrival: fetch_add at node x */
#define PC_T_REL   41       /* completer: raise wake[C], wake[R] to W(e,0) */
#define PC_T_ABS   42       /* split arrive / drop that did not complete: absent[k] = e */
#define PC_T_RECHK 43       /*   re-check: wake[k] == W(e,1)? */
#define PC_T_DUTY  44       /* a waiter woke (block returns here; BLOCK_RETURN) */
#define PC_T_FWD   45       /* forward: raise(wake[c], W(e,1)) for the next child c */
#define PC_T_PROXY 46       /*   after signal(wake[c]): absent[c] == e? then forward(c) too */

/* x: the node climbed / a rank; forward's explicit stack of (index, next child) with fsp
 * frames, fc the child being woken, frp where forward returns to. */
#define FAM_LOCALS byte x; byte fsp; byte fnode[4]; byte fpos[4]; byte fc; byte frp;


/* forward(v): for c in S.wakeup.children(v) in send order: wake(c). wake(c): if
 * raise(wake[c], W(e,1)) succeeded and absent[c] == e: forward(c) (proxy). The recursion is
 * the explicit stack; this pops the finished frames and goes on (or returns to frp). */
inline fwd_continue() {
  do
  :: fsp > 0 && fpos[fsp - 1] >= T_nwake[mymask * 4 + fnode[fsp - 1]] -> fsp--; fnode[fsp] = 0; fpos[fsp] = 0
  :: else -> break
  od;
  if
  :: fsp == 0 -> jump(frp); frp = 0
  :: else -> pc = PC_T_FWD
  fi
}
inline fwd_push(v) {
  fnode[fsp] = v;
  fpos[fsp] = 0;
  fsp++
}

/* Arrival at node x: c = fetch_add(cnt[x], 1, acq_rel) + 1 (target read before). c < target:
 * the arrival is done. Else cnt[x] = 0 (relaxed; nobody touches x again before this phase's
 * release: it joins the step) and continue at the next node; past the root this thread is the
 * completer. x == NONE at entry: a single participant, the completer at once. */
inline arrive_at_node() {
  if
  :: x == NONE -> note_arrival(); x = 0; call_complete(PC_T_REL)
  :: else ->
     cnt[x]++;
     note_arrival();
     if
     :: cnt[x] < T_target[mymask * 4 + x] ->
        x = 0;
        if
        :: op == OP_WAIT || op == OP_REDUCE -> call_block(W_WAKE(k), W0(e), 1, PC_T_DUTY)
        :: else -> pc = PC_T_ABS
        fi
     :: else ->
        cnt[x] = 0;
#ifndef MUT_NO_CLIMB
        x = T_next[mymask * 4 + x];
#else
        x = NONE;                   /* MUT_NO_CLIMB: a completed node counts as the root */
#endif
        if
        :: x == NONE -> x = 0; call_complete(PC_T_REL)
        :: else -> pc = PC_T_ARR
        fi
     fi
  fi
}

inline fam_first_arrival() {
  x = T_entry[mymask * 4 + idx];
  arrive_at_node()
}

/* wait() after arrive(): absent[k] = 0 (seq_cst), then as a present rank waiting. (Joins the
 * step of wait()'s abort check: abort touches nothing else this touches.) */
inline fam_wait_start() {
  absent[k] = 0;
  call_block(W_WAKE(k), W0(e), 1, PC_T_DUTY)
}

proctype rank(byte k) {
  RANK_LOCALS
  FAM_LOCALS
  do
#include "steps.pml"
  :: atomic { pc == PC_T_ARR -> arrive_at_node() }
  /* Completer C after COMPLETE(e): raise(wake[C], W(e,0)) (C takes its own duty); if C != R:
   * raise(wake[R], W(e,0)), signal; forward(R); if C != R: forward(C). wake[C] is raised by
   * C's wake parent too (max commutes, the result is not used) and only C sleeps on it: that
   * raise and its signal move into the step of R's raise. The two forwards are two frames. */
  :: atomic {
       pc == PC_T_REL ->
       if :: wv[W_WAKE(k)] < W0(e) -> wv[W_WAKE(k)] = W0(e) :: else fi;
       fsp = 0;
       if :: idx != 0 -> fwd_push(idx) :: else fi;
       fwd_push(0);
       /* arrive_and_drop goes on "as split arrive (absent = e)" even when it completed */
       frp = (op == OP_DROP -> PC_T_ABS : AFTER_COMPLETER);
       x = T_rank[mymask * 4];
       if
       :: x != k && wv[W_WAKE(x)] < W0(e) ->
          wv[W_WAKE(x)] = W0(e);
          fwd_continue();
          call_signal(W_WAKE(x), pc);    /* then on with the forwards (or done) */
          x = 0
       :: else -> x = 0; fwd_continue()
       fi
     }
  /* Split arrive() / arrive_and_drop() that did not complete: absent[k] = e (seq_cst); if
   * wake[k] == W(e,1) (seq_cst): forward(k): the signaller may have missed the absence. */
  :: atomic {
       pc == PC_T_ABS ->
       absent[k] = e;
#ifndef MUT_NO_RECHECK
       pc = PC_T_RECHK
#else
       jump(AFTER_SPLIT)            /* MUT_NO_RECHECK: no Dekker re-check */
#endif
     }
  :: atomic {
       pc == PC_T_RECHK ->
       if
       :: wv[W_WAKE(k)] == W1(e) -> fsp = 0; fwd_push(idx); frp = AFTER_SPLIT; fwd_continue()
       :: else -> jump(AFTER_SPLIT)
       fi
     }
  :: atomic {
       pc == PC_T_FWD ->
       fc = T_wake[(mymask * 4 + fnode[fsp - 1]) * 3 + fpos[fsp - 1]];
       fpos[fsp - 1]++;
       x = T_rank[mymask * 4 + fc];
       if
       :: wv[W_WAKE(x)] < W1(e) -> wv[W_WAKE(x)] = W1(e); call_signal(W_WAKE(x), PC_T_PROXY)
       :: else -> x = 0; fc = 0; fwd_continue()
       fi
     }
  :: atomic {
       pc == PC_T_PROXY ->
#ifndef MUT_NO_PROXY
       if :: absent[x] == e -> fwd_push(fc) :: else fi;
#endif
       x = 0;
       fc = 0;
       fwd_continue()
     }
  od
}

#include "procs.pml"
