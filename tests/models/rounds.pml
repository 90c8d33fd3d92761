/* Rounds family (dissemination: λ = 1; combine: Bruck §3 with λ = 2), proxies for absent ranks.
 * Spec: /work/notes/barrier-protocol.md, "Rounds family"; docs/barrier-models.md.
 * shape.pml (pb_model_shapes ALGORITHM P) gives λ and, per n, t, m and the offsets. */
#define NW (3 + 4 * 3)
#include "shape.pml"

#define NN T_n[mymask]
#define TT R_t[NN]
#define MM R_m[NN]
#define OFF(j) R_off[NN * 3 + (j)]
#define RANK(i) T_rank[mymask * 4 + (i)]
#define INDEX(r) T_index[mymask * 4 + (r)]
/* flag[i][j]: the message of send round j + 1 to index i (a Word: receivers block on it). */
#define W_FLAG(i, j) (3 + (i) * 3 + (j))

#define PC_R_SEND  40       /* own rounds: raise(flag[to][r-1], e) */
#define PC_R_SENT  41       /*   after signal: absent[to] == e? then advance(to) as proxy */
#define PC_R_RECVD 42       /* own rounds, present: the receive's block returned (BLOCK_RETURN) */
#define PC_R_TRY   43       /* own rounds, absent mode: load flag[i][r-λ] */
#define PC_R_PROG  44       /*   must wait: prog[k] = (e, step) */
#define PC_R_ABS   45       /*   absent[k] = e, then advance(k) once more */
#define PC_R_ADV   46       /* advance(a): cur = prog[a] */
#define PC_R_ASEND 47       /*   send step: raise(flag[to][r-1], e) */
#define PC_R_ASENT 48       /*   after signal: absent[to] == e? then advance(to) too */
#define PC_R_ARECV 49       /*   receive step: flag[i(a)][r-λ] >= e? */
#define PC_R_ACAS  50       /*   CAS prog[a]: (e, step) -> (e, step + 1) */
#define PC_R_REL   51       /* the leader's completer: release.v = e; signal(release) */

/* Where advance() returns to when its stack empties. */
#define RET_OWN   1         /* a rank's own rounds: go on with its next step */
#define RET_SPLIT 2         /* split arrive() / arrive_and_drop(): return */
#define RET_WAIT  3         /* wait(): its rounds are done */
#define AMAX 6              /* advance() nesting (asserted) */

/* The present rank's receive returned: its next step. */
#define BLOCK_RETURN \
  if \
  :: brp == PC_R_RECVD -> bsw = 0; btv = 0; brp = 0; st++; own_next() \
  :: else -> BLOCK_DONE \
  fi


#include "common.pml"

byte prog_e[P];             /* prog[k] = (e, step): one 64-bit word, loaded and CASed whole */
byte prog_s[P];

/* st: the own rounds' step (2r-1: round r's send, 2r: its receive); oblk: own rounds block
 * on receives (a present rank) or not (split arrive, drop); x: a target index; advance()'s
 * stack: frames (rank, step loaded, stage: 1 = its send is done, CAS next), asp frames, arp
 * where it returns to, ablk: its bottom frame (the rank itself in wait()) blocks on receives. */
#define FAM_LOCALS byte st; bit oblk; byte x; byte asp; byte arank[AMAX]; byte astep[AMAX]; bit astage[AMAX]; byte arp; bit ablk;

/* A completion step is needed iff a completion function, reduce_phase[e&1] == e or
 * drop_phase[e&1] == e (stable once every participant arrived: loads that move freely). */
#define RNEEDED (CFN || reduce_phase[e & 1] == e || drop_phase[e & 1] == e)

/* After its rounds a rank knows every participant arrived. Not needed: leave (no wake-up at
 * all). Needed: the leader's completer runs COMPLETE(e), release.v = e, signal(release); every
 * other rank that waits blocks on release. waiting: the rank is in arrive_and_wait,
 * arrive_and_reduce or wait() (else in arrive() or arrive_and_drop(), which return); own: its
 * own rounds ended here (else advance() ended them, and its CAS winner completed). */
inline rounds_done(waiting, own) {
  st = 0;
  if
  :: RNEEDED && own && idx == 0 -> call_complete(PC_R_REL)
  :: else ->
     if
     :: waiting && !RNEEDED -> check_leave(); jump(PC_ENTRY)
     :: waiting && RNEEDED -> call_block(W_RELEASE, e, 1, PC_ENTRY)
     :: else -> jump(AFTER_SPLIT)
     fi
  fi;
  oblk = 0
}

/* The own rounds from step st: skip the steps with nothing to do (round r sends iff r <= m,
 * receives iff r >= λ), then the next access. */
inline own_next() {
  do
  :: st <= 2 * TT && (st % 2) == 1 && (st + 1) / 2 > MM -> st++
  :: st <= 2 * TT && (st % 2) == 0 && st / 2 < LAMBDA -> st++
  :: else -> break
  od;
  if
  :: st > 2 * TT -> rounds_done(oblk, 1)
  :: st <= 2 * TT && (st % 2) == 1 -> pc = PC_R_SEND
  :: st <= 2 * TT && (st % 2) == 0 && oblk -> call_block(W_FLAG(idx, st / 2 - LAMBDA), e, 0, PC_R_RECVD)
  :: st <= 2 * TT && (st % 2) == 0 && !oblk -> pc = PC_R_TRY
  fi
}

/* Send of round r = (st+1)/2: deliver(idx + offset[r-1], r-1): raise(flag[to][r-1], e); if it
 * succeeded: signal, then absent[to] == e? */
inline own_send() {
  x = (idx + OFF((st + 1) / 2 - 1)) % NN;
  if
  :: wv[W_FLAG(x, (st + 1) / 2 - 1)] < e ->
     wv[W_FLAG(x, (st + 1) / 2 - 1)] = e;
     call_signal(W_FLAG(x, (st + 1) / 2 - 1), PC_R_SENT)
  :: else -> x = 0; st++; own_next()
  fi
}

/* advance(a): push a frame (its loaded step and stage reset). */
inline adv_push(a) {
  assert(asp < AMAX);
  arank[asp] = a;
  astep[asp] = 0;
  astage[asp] = 0;
  asp++;
  pc = PC_R_ADV
}
/* The top frame returns; an empty stack returns to arp. */
inline adv_pop() {
  asp--;
  arank[asp] = 0;
  astep[asp] = 0;
  astage[asp] = 0;
  if
  :: asp > 0 && astage[asp - 1] -> pc = PC_R_ACAS     /* the caller's send is done: its CAS */
  :: asp > 0 && !astage[asp - 1] -> pc = PC_R_ADV     /* (not reached: callers are at a send) */
  :: asp == 0 && arp == RET_OWN -> arp = 0; st++; own_next()
  :: asp == 0 && arp == RET_SPLIT -> arp = 0; ablk = 0; jump(AFTER_SPLIT)
  :: asp == 0 && arp == RET_WAIT -> arp = 0; ablk = 0; rounds_done(1, 0)
  fi
}

inline fam_first_arrival() {
  st = 1;
  oblk = (op == OP_WAIT || op == OP_REDUCE);
  if :: TT == 0 -> note_arrival() :: else fi   /* n = 1: no rounds at all */
  own_next();
  if
  :: pc == PC_R_SEND -> note_arrival(); own_send()   /* n >= 2: round 1 sends */
  :: else
  fi
}

/* wait() after arrive(): absent[k] = 0 (seq_cst); then advance(k) blocking on receives (CAS on
 * prog, competing with proxies that saw the absence). (Joins the step of wait()'s abort check:
 * abort touches nothing else this touches.) */
inline fam_wait_start() {
  absent[k] = 0;
  ablk = 1;
  arp = RET_WAIT;
  asp = 0;
  adv_push(k)
}

proctype rank(byte k) {
  RANK_LOCALS
  FAM_LOCALS
  do
#include "steps.pml"
  :: atomic { pc == PC_R_SEND -> own_send() }
  :: atomic {
       pc == PC_R_SENT ->
       if
#ifndef MUT_NO_PROXY
       :: absent[RANK(x)] == e -> arp = RET_OWN; adv_push(RANK(x)); x = 0
#endif
       :: else -> x = 0; st++; own_next()
       fi
     }
  /* Absent mode (split arrive, drop): a receive that is not there yet means wait: prog[k] =
   * (e, step), then absent[k] = e (seq_cst), then advance(k) once more (a signal may have
   * arrived before the absence was visible). */
  :: atomic {
       pc == PC_R_TRY ->
       if
       :: wv[W_FLAG(idx, st / 2 - LAMBDA)] >= e -> st++; own_next()
       :: else -> pc = PC_R_PROG
       fi
     }
  :: atomic { pc == PC_R_PROG -> prog_e[k] = e; prog_s[k] = st; st = 0; pc = PC_R_ABS }
  :: atomic {
       pc == PC_R_ABS ->
       absent[k] = e;
#ifndef MUT_NO_SELF_ADVANCE
       arp = RET_SPLIT; asp = 0; adv_push(k)
#else
       jump(AFTER_SPLIT)              /* MUT_NO_SELF_ADVANCE: no advance after the absence */
#endif
     }
  /* advance(a): loop { cur = prog[a]; if phase(cur) != e: return; if step > 2t: return; a
   * send step with r <= m: deliver(...); a receive step with r >= λ and flag[i(a)][r-λ] < e:
   * return (blocked); CAS prog[a]: cur -> (e, step + 1) (on failure reload) }. */
  :: atomic {
       pc == PC_R_ADV ->
       if
       :: prog_e[arank[asp - 1]] != e || prog_s[arank[asp - 1]] > 2 * TT -> adv_pop()
       :: else ->
          astep[asp - 1] = prog_s[arank[asp - 1]];
          astage[asp - 1] = 0;
          if
          :: (astep[asp - 1] % 2) == 1 && (astep[asp - 1] + 1) / 2 <= MM -> pc = PC_R_ASEND
          :: (astep[asp - 1] % 2) == 0 && astep[asp - 1] / 2 >= LAMBDA -> pc = PC_R_ARECV
          :: else -> pc = PC_R_ACAS
          fi
       fi
     }
  :: atomic {
       pc == PC_R_ASEND ->
       x = (INDEX(arank[asp - 1]) + OFF((astep[asp - 1] + 1) / 2 - 1)) % NN;
       astage[asp - 1] = 1;
       if
       :: wv[W_FLAG(x, (astep[asp - 1] + 1) / 2 - 1)] < e ->
          wv[W_FLAG(x, (astep[asp - 1] + 1) / 2 - 1)] = e;
          call_signal(W_FLAG(x, (astep[asp - 1] + 1) / 2 - 1), PC_R_ASENT)
       :: else -> x = 0; pc = PC_R_ACAS
       fi
     }
  :: atomic {
       pc == PC_R_ASENT ->
       if
#ifndef MUT_NO_PROXY
       :: absent[RANK(x)] == e -> adv_push(RANK(x)); x = 0
#endif
       :: else -> x = 0; pc = PC_R_ACAS
       fi
     }
  :: atomic {
       pc == PC_R_ARECV ->
       if
#ifndef MUT_SKIP_RECV
       :: wv[W_FLAG(INDEX(arank[asp - 1]), astep[asp - 1] / 2 - LAMBDA)] < e ->
          if
          :: asp == 1 && ablk ->       /* wait(): block on it, then reload */
             call_block(W_FLAG(INDEX(arank[0]), astep[0] / 2 - LAMBDA), e, 0, PC_R_ADV)
          :: else -> adv_pop()         /* blocked: return */
          fi
#endif
       :: else -> pc = PC_R_ACAS
       fi
     }
  /* The advancer whose CAS moves the leader past its last step completes, if needed. */
  :: atomic {
       pc == PC_R_ACAS ->
       astage[asp - 1] = 0;
       if
       :: prog_e[arank[asp - 1]] == e && prog_s[arank[asp - 1]] == astep[asp - 1] ->
          prog_s[arank[asp - 1]] = astep[asp - 1] + 1;
          if
          :: INDEX(arank[asp - 1]) == 0 && astep[asp - 1] + 1 > 2 * TT && RNEEDED -> call_complete(PC_R_REL)
          :: else -> pc = PC_R_ADV
          fi
       :: else -> pc = PC_R_ADV
       fi
     }
  /* release.v = e; signal(release); then back into advance() (its frame is done) or on. */
  :: atomic {
       pc == PC_R_REL ->
       wv[W_RELEASE] = e;
       call_signal(W_RELEASE, (asp > 0 -> PC_R_ADV : AFTER_COMPLETER))
     }
  od
}

#include "procs.pml"
