# s-to-p paper (Hambrusch et al.), Figs. 2-9 on the Paragon profile: the emulated data and plots.
# Sourced by tools/repro.sh (then tools/repro/s2p.sh writes the text): uses $rp, $tmp, $img, lib.sh.
# Parameters the text extraction lost are chosen here and listed in the report (s2p.sh).

s2p_five=br-lin,br-xy-source,br-xy-dim,xor,2-step
s2p_three=br-lin,br-xy-source,br-xy-dim
s2p_L=4096  # L for Figs. 2, 4, 5 (lost in the extraction); Fig. 7 states 4K
s2p_f2s=1,2,4,8,10,20,30,40,50,60,70,80,90,100  # Fig. 2's s
s2p_f6s="5 8 10 16 20 32 40"  # Fig. 6's s (L = 80 KB / s)
s2p_dists=row,col,equal,diag-right,diag-left,band,block,cross  # Fig. 5
# Fig. 8: 16x16, L = 6K, s = 16..192, including s that are not multiples of 16 (those put E(s) in
# whole columns of the 16x16 mesh).
s2p_rdists=equal,cross,band,block
s2p_f8s=16,24,32,40,48,64,75,80,96,100,112,128,144,160,176,192
# The sensitivity runs (tools/repro/s2p_sens.sh) start first: their Fig. 8 runs go to the
# background and overlap the runs below.
. "$here/tools/repro/s2p_sens.sh"

# Fig. 2: s = 1..100, equal distribution, 10x10.
"$rp" s2p --machine paragon --mesh 10x10 --algos "$s2p_five" --dists equal \
  --sources "$s2p_f2s" --bytes "$s2p_L" > "$tmp/s2p-fig2.csv"
# Fig. 3: L = 32 B..16 KB, s = 30, right diagonal, 10x10.
"$rp" s2p --machine paragon --mesh 10x10 --algos "$s2p_five" --dists diag-right --sources 30 \
  --bytes 32,64,128,256,512,1024,2048,4096,8192,16384 > "$tmp/s2p-fig3.csv"
# Fig. 4: p = 4..256 (square meshes), s = p/4 (rounded, at least 1), right diagonal.
echo "mesh,algo,dist,s,bytes,time_us,p" > "$tmp/s2p-fig4.csv"
for n in 2 4 6 8 10 12 14 16; do
  p=$((n * n)); s=$(((p + 2) / 4)); ((s >= 1)) || s=1
  "$rp" s2p --machine paragon --mesh "${n}x${n}" --algos "$s2p_five" --dists diag-right --sources "$s" \
    --bytes "$s2p_L" > "$tmp/s2p-fig4-$n.csv"
  csv_body "$tmp/s2p-fig4-$n.csv" | awk -v p="$p" '{print $0 "," p}' >> "$tmp/s2p-fig4.csv"
done
# Fig. 5: 10x10, s = 30, every distribution, the three broadcast algorithms.
"$rp" s2p --machine paragon --mesh 10x10 --algos "$s2p_three" --dists "$s2p_dists" --sources 30 \
  --bytes "$s2p_L" > "$tmp/s2p-fig5.csv"
awk -F, -v list="$s2p_dists" 'BEGIN {n = split(list, d, ","); for (i = 1; i <= n; i++) idx[d[i]] = i}
  NR == 1 {print $0 ",dist_index"; next} {print $0 "," idx[$3]}' "$tmp/s2p-fig5.csv" > "$tmp/s2p-fig5i.csv"
# Fig. 6: 10x10, right diagonal, total message size s·L = 80 KB.
echo "mesh,algo,dist,s,bytes,time_us" > "$tmp/s2p-fig6.csv"
for s in $s2p_f6s; do
  "$rp" s2p --machine paragon --mesh 10x10 --algos "$s2p_three" --dists diag-right --sources "$s" \
    --bytes $((81920 / s)) > "$tmp/s2p-fig6-$s.csv"
  csv_body "$tmp/s2p-fig6-$s.csv" >> "$tmp/s2p-fig6.csv"
done
# Fig. 6 under two other readings of the Paragon (docs/reproduction.md, "Which Paragon"): SUNMOS
# (RNR-94-016: 170 MB/s, 70 µs, charged as 35 µs at each end), and OSF/1's cost charged to the
# nodes' CPUs instead of the worm (links at the hardware's 175 MB/s, TOP500 1995 report as
# profiles/paragon.toml cites it; the per-byte difference 1/OSF − 1/175 µs split over sender and
# receiver). The profile's own values are read from it.
pg=$here/profiles/paragon.toml
paragon_hw_link=175
paragon_osf_link=$(prof paragon link_mb_per_s)
profile_with "$pg" "$tmp/paragon-sunmos.toml" link_mb_per_s=170 send_overhead=35.0 isend_overhead=35.0 recv_overhead=35.0
profile_with "$pg" "$tmp/paragon-cpu.toml" link_mb_per_s=$paragon_hw_link
sed -i -E "s/^((send|isend|recv)_overhead = \{ base_us = [0-9.]+) \}/\1, per_byte_us = $(awk -v o="$paragon_osf_link" -v h="$paragon_hw_link" 'BEGIN {printf "%.6f", (1 / o - 1 / h) / 2}') }/" "$tmp/paragon-cpu.toml"
[[ $(grep -c '^[a-z]*_overhead = .*per_byte_us' "$tmp/paragon-cpu.toml") == 3 ]] ||
  { echo "repro: profiles/paragon.toml no longer has the three overhead lines s2p_data.sh extends" >&2; exit 2; }
for v in sunmos cpu; do
  echo "mesh,algo,dist,s,bytes,time_us" > "$tmp/s2p-fig6-$v.csv"
  for s in 5 40; do
    "$rp" s2p --machine "$tmp/paragon-$v.toml" --mesh 10x10 --algos br-xy-source --dists diag-right --sources "$s" \
      --bytes $((81920 / s)) | tail -n +2 >> "$tmp/s2p-fig6-$v.csv"
  done
done
# Fig. 7: Br_Lin, p = 120 with the dimensions varying, equal distribution, L = 4K, three s.
"$rp" s2p --machine paragon --mesh 2x60,3x40,4x30,5x24,6x20,8x15,10x12 --algos br-lin --dists equal \
  --sources 10,30,60 --bytes 4096 > "$tmp/s2p-fig7.csv"
awk -F, 'NR == 1 {print $0 ",rows,sources"; next} {split($1, d, "x"); print $0 "," d[1] ",s = " $4}' "$tmp/s2p-fig7.csv" > "$tmp/s2p-fig7r.csv"
# Fig. 8: Repos_xy_source and Part_xy_source against Br_xy_source, and Repos_Lin and Part_Lin
# against Br_Lin.
"$rp" s2p --machine paragon --mesh 16x16 --algos br-xy-source,repos-xy-source,part-xy-source,br-lin,repos-lin,part-lin \
  --dists "$s2p_rdists" --sources "$s2p_f8s" --bytes 6144 > "$tmp/s2p-fig8.csv"
pct_csv "$tmp/s2p-fig8.csv" dist,s br-xy-source repos-xy-source > "$tmp/s2p-fig8-pct.csv"
pct_csv "$tmp/s2p-fig8.csv" dist,s br-xy-source part-xy-source > "$tmp/s2p-fig8-part.csv"
pct_csv "$tmp/s2p-fig8.csv" dist,s br-lin repos-lin > "$tmp/s2p-fig8-lin.csv"
pct_csv "$tmp/s2p-fig8.csv" dist,s br-lin part-lin > "$tmp/s2p-fig8-partlin.csv"
# The gain in ms, T(Br_xy_source) − T(Repos_xy_source), as the paper quotes it for cross and band.
awk -F, 'NR == 1 {print "dist,s,gain_ms"; next} $2 == "br-xy-source" {b[$3 "," $4] = $6; o[++n] = $3 "," $4} $2 == "repos-xy-source" {r[$3 "," $4] = $6}
  END {for (i = 1; i <= n; i++) printf "%s,%.2f\n", o[i], (b[o[i]] - r[o[i]]) / 1000}' "$tmp/s2p-fig8.csv" > "$tmp/s2p-fig8-ms.csv"
# Fig. 9: 16x16, s = 75, L varies.
"$rp" s2p --machine paragon --mesh 16x16 --algos br-xy-source,repos-xy-source --dists "$s2p_rdists" --sources 75 \
  --bytes 128,256,512,1024,2048,4096,6144,8192,12288,16384 > "$tmp/s2p-fig9.csv"
pct_csv "$tmp/s2p-fig9.csv" dist,bytes br-xy-source repos-xy-source > "$tmp/s2p-fig9-pct.csv"

ms=(--yscale 0.001 --ylabel "time (ms)")
"$rp" plot --csv "$tmp/s2p-fig2.csv" --x s --y time_us --series algo "${ms[@]}" --ymin 0 \
  --title "s-to-p Fig. 2: 10x10 Paragon, equal distribution, L = 4 KB" --xlabel "number of sources s" \
  --out "$img/repro-s2p-fig2.svg"
"$rp" plot --csv "$tmp/s2p-fig3.csv" --x bytes --y time_us --series algo "${ms[@]}" --ymin 0 \
  --title "s-to-p Fig. 3: 10x10 Paragon, s = 30, right diagonal" --xlabel "message length L (bytes)" \
  --out "$img/repro-s2p-fig3.svg"
"$rp" plot --csv "$tmp/s2p-fig4.csv" --x p --y time_us --series algo "${ms[@]}" --ymin 0 \
  --title "s-to-p Fig. 4: machine size p (square meshes), s = p/4, right diagonal, L = 4 KB" \
  --xlabel "machine size p" --out "$img/repro-s2p-fig4.svg"
"$rp" plot --csv "$tmp/s2p-fig5i.csv" --x dist_index --y time_us --series algo "${ms[@]}" --ymin 0 --xmin 0.5 --xmax 8.5 \
  --title "s-to-p Fig. 5: 10x10, s = 30, L = 4 KB, by source distribution" \
  --xlabel "1 row, 2 col, 3 equal, 4 diag-right, 5 diag-left, 6 band, 7 block, 8 cross" \
  --out "$img/repro-s2p-fig5.svg"
"$rp" plot --csv "$tmp/s2p-fig6.csv" --x s --y time_us --series algo "${ms[@]}" --ymin 0 \
  --title "s-to-p Fig. 6: 10x10, right diagonal, s·L = 80 KB" --xlabel "number of sources s" \
  --out "$img/repro-s2p-fig6.svg"
"$rp" plot --csv "$tmp/s2p-fig7r.csv" --x rows --y time_us --series sources "${ms[@]}" --ymin 0 --xmin 1.5 --xmax 10.5 \
  --title "s-to-p Fig. 7: Br_Lin, p = 120 as r x 120/r, equal distribution, L = 4 KB" \
  --xlabel "rows r of the r x (120/r) mesh" --out "$img/repro-s2p-fig7.svg"
"$rp" plot --csv "$tmp/s2p-fig8-lin.csv" --x s --y pct --series dist \
  --title "s-to-p: gain of Repos_Lin over Br_Lin, 16x16, L = 6 KB" \
  --xlabel "number of sources s" --ylabel "percentage difference (positive: repositioning pays)" \
  --out "$img/repro-s2p-fig8-lin.svg"
"$rp" plot --csv "$tmp/s2p-fig8-pct.csv" --x s --y pct --series dist \
  --title "s-to-p Fig. 8: gain of Repos_xy_source over Br_xy_source, 16x16, L = 6 KB" \
  --xlabel "number of sources s" --ylabel "percentage difference (positive: repositioning pays)" \
  --out "$img/repro-s2p-fig8.svg"
"$rp" plot --csv "$tmp/s2p-fig9-pct.csv" --x bytes --y pct --series dist --log2x \
  --title "s-to-p Fig. 9: gain of Repos_xy_source over Br_xy_source, 16x16, s = 75" \
  --xlabel "log2 of message length L (bytes)" --ylabel "percentage difference (positive: repositioning pays)" \
  --out "$img/repro-s2p-fig9.svg"
