# s-to-p paper (Hambrusch et al.): the runs of the sensitivity tables (tools/repro/s2p.sh prints
# them). Sourced by tools/repro/s2p_data.sh before its own runs: uses $rp, $tmp, $here, lib.sh and
# s2p_data.sh's figure parameters.
# Each run changes one parameter of profiles/paragon.toml that no source we have publishes (or one
# of the experiment's parameters that the paper's text extraction lost) and repeats the smallest
# set of runs behind each "off" verdict; the profile itself keeps its values.

pg=$here/profiles/paragon.toml
rbase_s=$(prof paragon recv_overhead)
rd_s=$(prof paragon router_delay_us)
sb_s=$(prof paragon send_buffer_packets)
half() { awk -v v="$1" 'BEGIN {printf "%g", v / 2}'; }
dbl() { awk -v v="$1" 'BEGIN {printf "%g", v * 2}'; }
# "tag|label|profile field=value" per variant: all of them run Figs. 2, 4, 5, 6 and 9; Fig. 8
# (16×16, about 7 s of CPU per variant, more than all the other variants together) only the
# variants in s2p_f8_tags.
s2p_variants=(
  "r05|receive set-up ×0.5 ($(half "$rbase_s") µs)|recv_overhead=$(half "$rbase_s")"
  "r2|receive set-up ×2 ($(dbl "$rbase_s") µs)|recv_overhead=$(dbl "$rbase_s")"
  "pk1k|1 KB packets (profile: one worm per message)|packet_bytes=1024"
  "rd2|router delay ×2 ($(dbl "$rd_s") µs per hop)|router_delay_us=$(dbl "$rd_s")"
  "sb2|send buffer ×2 ($(dbl "$sb_s") messages)|send_buffer_packets=$(dbl "$sb_s")"
)
s2p_f8_tags="r05 pk1k"
for v in "${s2p_variants[@]}"; do
  IFS='|' read -r tag label kv <<< "$v"
  profile_with "$pg" "$tmp/paragon-$tag.toml" "$kv"
done
# s2p_sens_small MACHINE TAG L: the runs behind the Fig. 2, 4 (p = 4 and 16, s = p/4 as there), 5, 6
# and 9 (L < 1 KB) verdicts on MACHINE, with L bytes per source in Figs. 2, 4 and 5 (Figs. 6 and 9
# fix their own L; a TAG starting with L, an L variant, runs only Figs. 2, 4 and 5).
s2p_sens_small() {
  "$rp" s2p --machine "$1" --mesh 10x10 --algos "$s2p_five" --dists equal \
    --sources "$s2p_f2s" --bytes "$3" > "$tmp/s2p-sens2-$2.csv"
  "$rp" s2p --machine "$1" --mesh 2x2 --algos "$s2p_five" --dists diag-right --sources $(((4 + 2) / 4)) \
    --bytes "$3" > "$tmp/s2p-sens4a-$2.csv"
  "$rp" s2p --machine "$1" --mesh 4x4 --algos "$s2p_five" --dists diag-right --sources $(((16 + 2) / 4)) \
    --bytes "$3" > "$tmp/s2p-sens4b-$2.csv"
  "$rp" s2p --machine "$1" --mesh 10x10 --algos "$s2p_three" --dists "$s2p_dists" \
    --sources 30 --bytes "$3" > "$tmp/s2p-sens5-$2.csv"
  [[ $2 == L* ]] && return 0
  echo "mesh,algo,dist,s,bytes,time_us" > "$tmp/s2p-sens6-$2.csv"
  for s in $s2p_f6s; do
    "$rp" s2p --machine "$1" --mesh 10x10 --algos br-xy-source --dists diag-right --sources "$s" \
      --bytes $((81920 / s)) | tail -n +2 >> "$tmp/s2p-sens6-$2.csv"
  done
  "$rp" s2p --machine "$1" --mesh 16x16 --algos br-xy-source,repos-xy-source --dists "$s2p_rdists" --sources 75 \
    --bytes 128,256,512 > "$tmp/s2p-sens9-$2.csv"
}
# All of them in one background job (on two cores they overlap the figures' own runs, which are
# serial); s2p.sh waits for it before it reads a result.
(
  for tag in $s2p_f8_tags; do
    "$rp" s2p --machine "$tmp/paragon-$tag.toml" --mesh 16x16 --algos br-xy-source,repos-xy-source,br-lin,repos-lin \
      --dists "$s2p_rdists" --sources "$s2p_f8s" --bytes 6144 > "$tmp/s2p-sens8-$tag.csv"
  done
  for v in "${s2p_variants[@]}"; do
    IFS='|' read -r tag label kv <<< "$v"
    s2p_sens_small "$tmp/paragon-$tag.toml" "$tag" "$s2p_L"
  done
  # The message length of Figs. 2, 4 and 5, lost in the extraction: half and double ours.
  s2p_sens_small paragon L05 $((s2p_L / 2))
  s2p_sens_small paragon L2 $((s2p_L * 2))
) &
s2p_sens_pids=($!)
