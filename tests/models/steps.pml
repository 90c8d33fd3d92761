/* The transitions every rank shares, included inside the rank's do-loop by each family file.
 * The family defines fam_first_arrival() (the arrival's first access, run inside the entry
 * step) and fam_wait_start() (what wait() does after its entry check). */

/* Entry: if aborted: throw Aborted; e = ++phase[k]; args[k]; reduce_phase / drop_phase /
 * dropped[k] (relaxed, published by the arrival); the rank records S. One step with the
 * arrival's first access: the entry's only shared load besides the stable shape is `aborted`,
 * whose one writer (abort) touches nothing the arrival's first access touches, and its relaxed
 * writes are read only after the arrival. A rank ends at g_last (a rank stays absent for good
 * in that phase: the next cannot complete). */
:: atomic {
     pc == PC_ENTRY && (e == g_last || aborted) -> break
   }
:: atomic {
     pc == PC_ENTRY && e < g_last && !aborted ->
     if
     :: (OPS & OP_WAIT) -> op = OP_WAIT
     :: (OPS & OP_SPLIT) && MAY_SPECIAL -> op = OP_SPLIT
     :: (OPS & OP_ABSENT) && MAY_SPECIAL -> op = OP_ABSENT
     :: (OPS & OP_REDUCE) && MAY_SPECIAL -> op = OP_REDUCE
     :: (OPS & OP_DROP) && MAY_SPECIAL -> op = OP_DROP
     fi;
     e++;
     mymask = cur_mask;
     idx = T_index[mymask * 4 + k];
     arr = 1;
     args[k] = (op == OP_REDUCE);
     if
     :: op == OP_WAIT
     :: op == OP_REDUCE -> reduce_phase[e & 1] = e; g_live[k] = 1; NOTE_REDUCE
     :: op == OP_DROP -> drop_phase[e & 1] = e; dropped[k] = 1; g_dropped_in[k] = e; NOTE_DROP
     :: op == OP_ABSENT -> g_last = e   /* phase e + 1 can never complete: the others stop */
     :: op == OP_SPLIT
     fi;
     fam_first_arrival()
   }
:: pc == PC_END -> break

/* wait(k, token): if aborted: throw Aborted; then the family's wait. */
:: atomic {
     pc == PC_WAITCALL ->
     if
     :: aborted -> jump(PC_END)
     :: else -> fam_wait_start()
     fi
   }

#ifndef AWAIT
/* signal(W) after changing W.v: if sleepers > 0 (seq_cst load after the seq_cst RMW on v):
 * seq += 1; futex_wake(seq). */
:: atomic {
     pc == PC_SIG ->
     if
     :: sl[ssw] > 0 -> pc = PC_SIG_BUMP
     :: else -> jump(srp); srp = 0; ssw = 0
     fi
   }
:: d_step {
     pc == PC_SIG_BUMP -> bump(ssw); jump(srp); srp = 0; ssw = 0
   }
#endif

#ifndef AWAIT
/* block(W, v >= t): loop { sleepers += 1; s = seq; if !cond && !aborted: futex_wait(seq, s);
 * sleepers -= 1; if cond or aborted: return }. Lipton: "sleepers += 1" moves right (a
 * signaller that loads sleepers before it only misses bumping a seq this rank has not loaded
 * yet) into the step of "s = seq"; "sleepers -= 1" moves left (nobody else reads what this
 * rank loaded) into the step before it. cond only grows, so seen true before the futex_wait it
 * is true at the final check: that step returns at once. With blv the return ends the phase:
 * check_leave() in that step. BLOCK_RETURN (the family's, or jump(brp)) may still read
 * wv[bsw] as that load saw it, and resets bsw, btv, brp. A lost wake-up leaves the rank
 * blocked at PC_BLK_WAIT: an invalid end state. The spin/yield phase before the loop only
 * polls cond; leaving it out leaves every other behaviour in. */
:: d_step {
     pc == PC_BLK ->
     sl[bsw]++; ws[k] = bsw; wk[k] = 0;
#ifndef MUT_BLOCK_NO_RECHECK
     pc = PC_BLK_COND
#else
     pc = PC_BLK_WAIT             /* MUT_BLOCK_NO_RECHECK: sleeps without re-checking */
#endif
   }
:: atomic {
     pc == PC_BLK_COND ->
     if
     :: wv[bsw] >= btv ->
        sl[bsw]--; ws[k] = NOWORD; wk[k] = 0;
        if :: blv -> check_leave() :: else fi;
        blv = 0;
        BLOCK_RETURN
     :: else ->
#if ABORT
        pc = PC_BLK_AB
#else
        pc = PC_BLK_WAIT
#endif
     fi
   }
:: atomic {
     pc == PC_BLK_AB ->
     if
     :: aborted -> sl[bsw]--; ws[k] = NOWORD; wk[k] = 0; pc = PC_BLK_FIN
     :: else -> pc = PC_BLK_WAIT
     fi
   }
:: d_step {
     pc == PC_BLK_WAIT && wk[k] ->            /* futex_wait(seq, s) returned */
     sl[bsw]--; ws[k] = NOWORD; wk[k] = 0; pc = PC_BLK_FIN
   }
:: atomic {
     pc == PC_BLK_FIN ->
     if
     :: wv[bsw] >= btv ->
        if :: blv -> check_leave() :: else fi;
        blv = 0;
        BLOCK_RETURN
     :: else ->
#if ABORT
        pc = PC_BLK_FAB
#else
        pc = PC_BLK
#endif
     fi
   }
:: atomic {
     pc == PC_BLK_FAB ->
     if
     :: aborted -> bsw = 0; btv = 0; brp = 0; blv = 0; throw_aborted()
     :: else -> pc = PC_BLK
     fi
   }
#else
/* AWAIT: block(W, v >= t) as "await v >= t or aborted" (when both hold, either way out, as a
 * real final check can see them), signal() as nothing: the futex protocol is left out. */
:: atomic {
     pc == PC_BLK && wv[bsw] >= btv ->
     if :: blv -> check_leave() :: else fi;
     blv = 0;
     BLOCK_RETURN
   }
:: atomic {
     pc == PC_BLK && aborted -> bsw = 0; btv = 0; brp = 0; blv = 0; throw_aborted()
   }
#endif

/* COMPLETE(e), exactly one thread per phase. Step 1: in a phase with a reducer
 * (reduce_phase[e & 1] == e, written before the reducers' arrivals and not again before this
 * phase's release), completing.v = e (seq_cst store); if aborted (seq_cst load): raise(completed,
 * e) and signal in a phase with a reducer; throw Aborted. Steps 2-3 (fold and completion
 * function; rebuild) read only words no other thread writes before this phase's release
 * (reduce_phase, drop_phase, dropped, the shape): they join the step of the aborted load. Step 4,
 * in a phase with a reducer: raise(completed, e); signal(completed); then back to the family's
 * release. Only a reducer's fold handshake reads completing and completed. */
:: atomic {
     pc == PC_CMP ->
#ifndef MUT_NO_COMPLETING
     if :: reduce_phase[e & 1] == e -> completing = e :: else fi;
#endif
     pc = PC_CMP_AB
   }
:: d_step {
     pc == PC_CMP_AB ->
#if !ABORT
     /* without abort() nobody reads it: it joins this step */
     if :: reduce_phase[e & 1] == e -> completing = e :: else fi;
#endif
#ifndef MUT_NO_ABORT_CHECK
     if
     :: aborted -> thr = 1
     :: else ->
#endif
        participants(e, g_n);
        assert(g_arrived[e] == g_n);  /* property 2: never for a phase not all reached */
        assert(g_started[e] == 0);    /* property 2: at most once per phase */
        assert(!aborted);             /* property 2: never starts after abort() */
        g_started[e]++;
        fold = (reduce_phase[e & 1] == e);
        if
        :: drop_phase[e & 1] == e ->  /* S' over the ranks not dropped, published for e + 1 */
           g_n = mymask;
           g_i = 0;
           do
           :: g_i < P -> if :: dropped[g_i] -> g_n = g_n & ~(1 << g_i) :: else fi; g_i++
           :: else -> break
           od;
           cur_mask = g_n;
           g_i = 0
        :: else
        fi;
        g_n = 0
#ifndef MUT_NO_ABORT_CHECK
     fi
#endif
     ;
     pc = PC_CMP_DONE
   }
/* The fold reads every registered owner's arguments and copies the result into each owner's
 * frame, all before step 4; checking the owners in step 4, its latest possible end, is at
 * least as strict as checking every access (property 4). */
:: d_step {
     pc == PC_CMP_DONE ->
     if
     :: fold ->
        g_i = 0;
        do
        :: g_i < P ->
           if
           :: ((mymask >> g_i) & 1) && args[g_i] -> assert(g_live[g_i])
           :: else
           fi;
           g_i++
        :: else -> break
        od;
        g_i = 0
     :: else
     fi;
     fold = 0;
     if :: !thr -> g_done[e] = 1 :: else -> g_live[k] = 0 fi;
     if
     :: reduce_phase[e & 1] == e ->
        if :: wv[W_COMPLETED] < e -> wv[W_COMPLETED] = e :: else fi;
        call_signal(W_COMPLETED, (thr -> PC_END : crp))
     :: else -> jump((thr -> PC_END : crp))
     fi;
     crp = 0
   }

#ifndef AWAIT
/* Fold handshake after abort: block until completing != e or completed >= e (Dekker with
 * COMPLETE step 1). Same Lipton moves as block(); completed only grows, completing may still
 * become e, so only the completed exit is taken before the final check. */
:: d_step {
     pc == PC_HS -> sl[W_COMPLETED]++; ws[k] = W_COMPLETED; wk[k] = 0; pc = PC_HS_ING
   }
:: atomic {
     pc == PC_HS_ING ->
     if
     :: completing != e -> sl[W_COMPLETED]--; ws[k] = NOWORD; wk[k] = 0; pc = PC_HS_FING
     :: else -> pc = PC_HS_ED
     fi
   }
:: atomic {
     pc == PC_HS_ED ->
     if
     :: wv[W_COMPLETED] >= e -> sl[W_COMPLETED]--; ws[k] = NOWORD; wk[k] = 0; jump(PC_END)
     :: else -> pc = PC_HS_WAIT
     fi
   }
:: d_step {
     pc == PC_HS_WAIT && wk[k] -> sl[W_COMPLETED]--; ws[k] = NOWORD; wk[k] = 0; pc = PC_HS_FING
   }
:: atomic {
     pc == PC_HS_FING ->
     if
     :: completing != e -> jump(PC_END)
     :: else -> pc = PC_HS_FED
     fi
   }
:: atomic {
     pc == PC_HS_FED ->
     if
     :: wv[W_COMPLETED] >= e -> jump(PC_END)
     :: else -> pc = PC_HS
     fi
   }
#else
/* AWAIT: the fold handshake as "await completing != e or completed >= e". */
:: atomic { pc == PC_HS && completing != e -> jump(PC_END) }
:: atomic { pc == PC_HS && wv[W_COMPLETED] >= e -> jump(PC_END) }
#endif
