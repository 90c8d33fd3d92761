/* What every barrier model shares: configuration, globals, ghosts and helpers (steps.pml holds
 * the shared transitions of a rank, procs.pml the other processes). docs/barrier-models.md
 * explains the choices; the spec is /work/notes/barrier-protocol.md.
 *
 * A rank is one process whose transitions are guarded by its program counter pc: each
 * transition is one atomic step holding exactly one access to shared state (a load, store or
 * RMW of the real code) plus the thread-local work up to the next access, so every interleaving
 * of the real instructions under sequential consistency is explored and nothing else. Where two
 * accesses share a step, a comment gives the Lipton argument (the other access cannot be
 * touched by any other thread at that moment, or no other thread's action conflicts with both).
 * Ghost variables (g_*) only record, inside real steps.
 *
 * Configuration (-D): P ranks (1..4), PH phases, OPS the calls a rank may pick (bit mask of
 * OP_*), SPECIAL the most ranks that may pick anything but arrive_and_wait (any SPECIAL of the
 * P, chosen at the start), ABORT 1 for an
 * abort() that may fire at any point, CFN 1 for a completion function (rounds family; the
 * others run COMPLETE in every phase anyway). MUT_* flags remove one step of the protocol: the
 * mutants that the tests expect SPIN to refute. */

#ifndef P
#define P 3
#endif
#ifndef PH
#define PH 2
#endif
#ifndef OPS
#define OPS 31
#endif
#ifndef SPECIAL
#define SPECIAL P
#endif
#ifndef ABORT
#define ABORT 1
#endif
#ifndef CFN
#define CFN 0
#endif

/* The calls a rank picks per phase. */
#define OP_WAIT    1   /* arrive_and_wait */
#define OP_SPLIT   2   /* arrive(), later wait() */
#define OP_ABSENT  4   /* arrive(), wait() never called: absent for good */
#define OP_REDUCE  8   /* arrive_and_reduce */
#define OP_DROP   16   /* arrive_and_drop */

/* Words {v, seq, sleepers}: wv[w] and sl[w] for word id w. seq is kept as what
 * futex_wait(seq, s) can see of it: ws[k] = the word rank k loaded seq from (NOWORD: none) and
 * wk[k] = "seq changed since", so futex_wait(seq, s) is "block until wk[k]" and the states do
 * not count bumps (seq cannot wrap in a run this short). */
#define NOWORD 0
#define W_COMPLETED 1
#define W_RELEASE 2
byte wv[NW];
byte sl[NW];
byte ws[P];
bit wk[P];

bit aborted;
byte completing;            /* COMPLETE step 1 */
byte absent[P];             /* the phase rank k is absent in, else 0 */
bit args[P];                /* args[k] != null: rank k's reduction arguments */
byte reduce_phase[2];
byte drop_phase[2];
bit dropped[P];
byte cur_mask;              /* the published shape S: the set of participants (bit per rank) */

/* Ghosts. */
byte g_arrived[PH + 1];     /* participants of phase e that arrived (first visible step) */
byte g_started[PH + 1];     /* COMPLETE(e) got past its abort check */
bit g_done[PH + 1];         /* COMPLETE(e) finished (fold, completion, rebuild) */
bit g_reduce[PH + 1];       /* someone reduces in phase e */
bit g_drop[PH + 1];         /* someone drops in phase e */
#if SPECIAL < P
byte g_smask;               /* the ranks that may pick anything but arrive_and_wait (init) */
#define MAY_SPECIAL ((g_smask >> k) & 1)
#else
#define MAY_SPECIAL 1
#endif
byte g_dropped_in[P];       /* the phase rank k dropped in, else 0 */
bit g_live[P];              /* rank k's frame holding its reduction arguments is alive */
byte g_last = PH;           /* the last phase ranks enter (a rank absent for good ends it) */
hidden byte g_i;            /* scratch inside d_steps */
hidden byte g_n;

/* Program counters of the shared transitions (steps.pml); families use 40 and up. */
#define PC_END      0
#define PC_ENTRY    1
#define PC_WAITCALL 2       /* wait(): entry check */
#define PC_SIG      3       /* signal(W): load sleepers */
#define PC_SIG_BUMP 4       /*   seq += 1; futex_wake */
#define PC_BLK      5       /* block(W, v >= t): sleepers += 1; s = seq */
#define PC_BLK_COND 6       /*   load v */
#define PC_BLK_AB   7       /*   load aborted */
#define PC_BLK_WAIT 8       /*   futex_wait(seq, s); sleepers -= 1 */
#define PC_BLK_FIN  9       /*   final: load v */
#define PC_BLK_FAB  10      /*   final: load aborted */
#define PC_CMP      11      /* COMPLETE(e) step 1: completing = e */
#define PC_CMP_AB   12      /*   load aborted; fold, completion, rebuild */
#define PC_CMP_DONE 13      /*   raise(completed, e), then signal(completed) */
#define PC_HS       16      /* fold handshake: sleepers += 1; s = seq */
#define PC_HS_ING   17      /*   load completing */
#define PC_HS_ED    18      /*   load completed */
#define PC_HS_WAIT  19      /*   futex_wait; sleepers -= 1 */
#define PC_HS_FING  20      /*   final: load completing */
#define PC_HS_FED   21      /*   final: load completed */

/* The locals every rank has. ssw/srp: signal's word and return pc; bsw/btv/brp/blv: block's
 * word, target, return pc and "returning ends the phase"; crp: where COMPLETE returns to. Every one is reset when done with, so that states do not
 * differ in dead values. */
#define RANK_LOCALS \
  byte pc = PC_ENTRY; byte e; byte op; byte mymask; byte idx; \
  bit arr; bit thr; bit fold; \
  byte ssw; byte srp; byte bsw; byte btv; byte brp; bit blv; byte crp;

/* seq += 1 of word w (signal(), abort()): every rank that loaded seq from it sees a change. */
inline bump(w) {
  g_i = 0;
  do
  :: g_i < P -> if :: ws[g_i] == w -> wk[g_i] = 1 :: else fi; g_i++
  :: else -> break
  od;
  g_i = 0
}

/* Participants of phase ph: the ranks that did not drop in an earlier phase. */
inline participants(ph, out) {
  out = 0;
  g_i = 0;
  do
  :: g_i < P -> if :: g_dropped_in[g_i] == 0 || g_dropped_in[g_i] >= ph -> out++ :: else fi; g_i++
  :: else -> break
  od;
  g_i = 0
}

/* Whether phase ph needs a completion step: always for central and tree (their completer runs
 * COMPLETE in every phase); rounds only with a completion function, a reduction or a drop.
 * (Ghosts that record history split states that are otherwise equal: kept only where read.) */
#ifdef SHAPE_FAMILY_rounds
#define NEEDED(ph) (CFN || g_reduce[ph] || g_drop[ph])
#define NOTE_REDUCE g_reduce[e] = 1
#define NOTE_DROP g_drop[e] = 1
#else
#define NEEDED(ph) 1
#define NOTE_REDUCE skip
#define NOTE_DROP skip
#endif

/* Inside the step that is the rank's first visible arrival action: property 1 counts it. */
inline note_arrival() {
  if :: arr -> g_arrived[e]++; arr = 0 :: else fi
}

/* Property 1 and the "before anyone leaves" half of property 2, inside the step in which a
 * waiting rank sees its phase complete (the earliest moment it can return). */
inline check_leave() {
  participants(e, g_n);
  assert(g_arrived[e] == g_n);           /* property 1 */
  assert(!NEEDED(e) || g_done[e]);       /* property 2: completion before anyone leaves */
  g_live[k] = 0;
  g_n = 0
}

/* Control transfers, inside a step (they only set locals). jump(t): go on at t; the rank's
 * phase ends at PC_ENTRY (next call) and PC_END (it threw, dropped, or stays absent), and so
 * does the frame holding its reduction arguments. */
inline jump(t) {
  pc = t;
  if
  :: pc == PC_ENTRY || pc == PC_END -> op = 0; g_live[k] = 0
  :: else
  fi
}
inline call_signal(w, ret) {
#ifndef AWAIT
  ssw = w;
  srp = ret;
  pc = PC_SIG
#else
  jump(ret)
#endif
}
inline call_block(w, target, leaving, ret) {
  bsw = w;
  btv = target;
  blv = leaving;
  brp = ret;
  pc = PC_BLK
}
inline call_complete(ret) {
  crp = ret;
#if ABORT
  pc = PC_CMP
#else
  pc = PC_CMP_AB
#endif
}
/* A waiter that saw abort throws Aborted; with its reduction arguments registered it first
 * waits out a fold that may be reading them. */
inline throw_aborted() {
#ifndef MUT_NO_HANDSHAKE
  if
  :: op == OP_REDUCE -> pc = PC_HS
  :: else -> jump(PC_END)
  fi
#else
  jump(PC_END)
#endif
}
#define BLOCK_DONE g_n = brp; bsw = 0; btv = 0; brp = 0; jump(g_n); g_n = 0
#ifndef BLOCK_RETURN
#define BLOCK_RETURN BLOCK_DONE
#endif

/* Where a split arrive() or arrive_and_drop() goes once it is done. */
#define AFTER_SPLIT (op == OP_SPLIT -> PC_WAITCALL : PC_END)
/* Where a completer goes once its part of the phase is done. */
#define AFTER_COMPLETER (op == OP_WAIT || op == OP_REDUCE -> PC_ENTRY : (op == OP_SPLIT -> PC_WAITCALL : PC_END))
