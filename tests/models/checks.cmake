# The model checks (docs/barrier-models.md, "The checks and what they cost", gives each one's
# states, time and memory). Defaults (common.pml): PH=2 phases, OPS=31 (every call), SPECIAL=P
# (every rank may pick any call), ABORT=1, CFN=0. Budget: each check under 30 s of CPU and all
# of them about four and a half minutes, since CI is a 2-core box; so p = 3 and p = 4 (the rounds
# family, whose states grow fastest, most of all) run restricted configurations, each exhaustive;
# p = 2 runs the full configuration.

# central
postbox_model(central.p2 central central 2 pass)
postbox_model(central.p3 central central 3 pass)
postbox_model(central.p4 central central 4 pass -DPH=1 -DSPECIAL=2)
postbox_model(progress.central.p3 central central 3 progress -DPH=1)

# tree family. At p = 2 fibo's, mcs's and hier's tables are equal (0 -> 1). At p = 3 the tables
# of fibo and hier are equal and mcs's differ only in the send order, so each runs a different
# configuration there; interior wake-up nodes (proxies, the re-check's duty) exist only at p = 4.
postbox_model(tree.p2.fibo tree fibo 2 pass)
postbox_model(tree.p3.fibo tree fibo 3 pass -DPH=1)
postbox_model(tree.p3.mcs tree mcs 3 pass -DSPECIAL=1)
postbox_model(tree.p3.hier tree hier 3 pass -DABORT=0 -DOPS=27)
postbox_model(tree.p3.tournament tree tournament 3 pass -DPH=1)
postbox_model(tree.p4.fibo tree fibo 4 pass -DPH=1 -DSPECIAL=1)
postbox_model(tree.p4.mcs tree mcs 4 pass -DPH=1 -DSPECIAL=1)
postbox_model(tree.p4.hier tree hier 4 pass -DPH=1 -DSPECIAL=1)
postbox_model(tree.p4.tournament tree tournament 4 pass -DPH=1 -DSPECIAL=1)
postbox_model(progress.tree.p3.fibo tree fibo 3 progress -DPH=1 -DSPECIAL=1)

# rounds family (p = 4 only with AWAIT: the futex protocol is checked by the others)
postbox_model(rounds.p2.combine rounds combine 2 pass -DCFN=1)
postbox_model(rounds.p3.dissemination rounds dissemination 3 pass -DPH=1 -DSPECIAL=1)
postbox_model(rounds.p3.combine rounds combine 3 pass -DPH=1 -DSPECIAL=1 -DCFN=1)
postbox_model(rounds.p4.dissemination rounds dissemination 4 pass -DPH=1 -DSPECIAL=1 -DAWAIT)
postbox_model(rounds.p4.combine rounds combine 4 pass -DPH=1 -DSPECIAL=1 -DABORT=0 -DCFN=1 -DAWAIT)
postbox_model(progress.rounds.p3.dissemination rounds dissemination 3 progress -DPH=1 -DSPECIAL=1 -DABORT=0)

# Mutants: each removes one step; SPIN must refute it.
postbox_model(mutant.old_phase central central 3 fail -DMUT_OLD_PHASE)
postbox_model(mutant.no_climb tree fibo 4 fail -DMUT_NO_CLIMB -DPH=1 -DSPECIAL=0 -DABORT=0)
postbox_model(mutant.skip_recv rounds dissemination 3 fail -DMUT_SKIP_RECV -DPH=1)
postbox_model(mutant.no_abort_check central central 3 fail -DMUT_NO_ABORT_CHECK -DPH=1)
postbox_model(mutant.no_recheck tree mcs 4 fail -DMUT_NO_RECHECK -DPH=1 -DSPECIAL=1 -DOPS=5 -DABORT=0)
postbox_model(mutant.no_proxy.tree tree mcs 4 fail -DMUT_NO_PROXY -DPH=1 -DSPECIAL=1 -DOPS=5 -DABORT=0)
postbox_model(mutant.no_proxy.rounds rounds dissemination 3 fail -DMUT_NO_PROXY -DPH=1)
postbox_model(mutant.no_self_advance rounds dissemination 3 fail -DMUT_NO_SELF_ADVANCE -DPH=1)
postbox_model(mutant.block_no_recheck central central 3 fail -DMUT_BLOCK_NO_RECHECK -DPH=1)
postbox_model(mutant.abort_no_wake central central 3 fail -DMUT_ABORT_NO_WAKE -DPH=1)
postbox_model(mutant.no_completing central central 3 fail -DMUT_NO_COMPLETING -DPH=1 -DOPS=9)
postbox_model(mutant.no_handshake central central 3 fail -DMUT_NO_HANDSHAKE -DPH=1 -DOPS=9)
