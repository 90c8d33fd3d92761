# Hambrusch & Khokhar, C³ paper, §3 (one-to-one on mesh, hypercube, tree) and Figs. 3-7:
# one-to-all and all-to-all on a 256-processor Delta.
# Sourced by tools/repro.sh: uses $pb, $rp, $tmp, $img and lib.sh; writes markdown to stdout.

o2a_algos=1-lev-dir,1-lev-our-br,1-lev-sys-br,2-lev-rec,3-lev-sq,logp-lev-sq,logp-lev-rec:0.75
o2a_L=16,32,64,128,256,512,1024,2048,4096,6144,8192,12288,16384
a2a_algos=1-lev-dir,1-lev-perm:linear,1-lev-perm:xor,1-lev-perm:balanced,2-lev-sq,2-lev-rc,logp-lev-bfly
a2a_L=16,32,64,128,256,512,1024,4096,16384
# Sensitivity of the Fig. 7 counts: all-to-all with one parameter of profiles/delta.toml changed,
# at p = 64 (8×8; the p = 256 runs take a minute of CPU each, p = 64 about a second). In the
# background: on two cores the runs overlap the p = 256 runs below; the counts are read after them.
dp=$here/profiles/delta.toml
d_recv_s=$(prof delta recv_overhead)
d_isend_s=$(prof delta isend_overhead)
x2() { awk -v v="$1" -v k="$2" 'BEGIN {print v * k}'; }
# "published|label|field=value": published yes where another paper states the value.
c3_sens_variants=(
  "no|receive set-up ×0.5 ($(x2 "$d_recv_s" 0.5) µs)|recv_overhead=$(x2 "$d_recv_s" 0.5)"
  "no|receive set-up ×2 ($(x2 "$d_recv_s" 2) µs)|recv_overhead=$(x2 "$d_recv_s" 2)"
  "no|receive set-up $r_fit µs (fitted to Bruck Fig. 3)|recv_overhead=$r_fit"
  "no|isend set-up ×0.5 ($(x2 "$d_isend_s" 0.5) µs)|isend_overhead=$(x2 "$d_isend_s" 0.5)"
  "no|isend set-up ×2 ($(x2 "$d_isend_s" 2) µs)|isend_overhead=$(x2 "$d_isend_s" 2)"
  "yes|links at 12.5 MB/s (the C³ paper's §4 assumption)|link_mb_per_s=12.5"
)
i=0
for v in "${c3_sens_variants[@]}"; do
  i=$((i + 1)); IFS='|' read -r pub label kv <<< "$v"
  profile_with "$dp" "$tmp/delta-a2a-sens-$i.toml" "$kv"
done
(
  "$rp" c3 --op all-to-all --algos "$a2a_algos" --L "$a2a_L" --p 64 --mesh 8x8 --machine delta --sends nb > "$tmp/c3-a2a-sens-0.csv"
  for ((j = 1; j <= i; j++)); do
    "$rp" c3 --op all-to-all --algos "$a2a_algos" --L "$a2a_L" --p 64 --mesh 8x8 --machine "$tmp/delta-a2a-sens-$j.toml" --sends nb > "$tmp/c3-a2a-sens-$j.csv"
  done
) &
c3_sens_pid=$!
"$rp" c3 --op one-to-all --algos "$o2a_algos" --L "$o2a_L" --p 256 --mesh 16x16 --machine delta --sends nb > "$tmp/c3-o2a.csv"
"$rp" c3 --op all-to-all --algos "$a2a_algos" --L "$a2a_L" --p 256 --mesh 16x16 --machine delta --sends nb > "$tmp/c3-a2a.csv"
"$pb" c3 --table --op one-to-all --p 256 --machine delta > "$tmp/c3-o2a-table.txt"
"$pb" c3 --table --op all-to-all --p 256 --machine delta > "$tmp/c3-a2a-table.txt"

# The paper's Fig. 3 closed forms with s = 8 (its last column), at our message sizes.
{
  echo "algo,L,comm_units"
  for L in ${o2a_L//,/ }; do
    awk -v L="$L" 'BEGIN {
      printf "1-lev-dir,%d,%.1f\n", L, 2048 + 0.55 * L; printf "1-lev-our-br,%d,%.1f\n", L, 64 + 27 * L
      printf "2-lev-rec,%d,%.1f\n", L, 256 + 1.23 * L; printf "3-lev-sq,%d,%.1f\n", L, 192 + 0.93 * L
      printf "logp-lev-sq,%d,%.1f\n", L, 64 + 5.29 * L }'
  done
} > "$tmp/c3-o2a-paper.csv"

for op in o2a a2a; do
  ratio_csv "$tmp/c3-$op.csv" L algo comm_units > "$tmp/c3-$op-units-ratio.csv"
  ratio_csv "$tmp/c3-$op.csv" L algo time_us > "$tmp/c3-$op-time-ratio.csv"
done
"$rp" plot --csv "$tmp/c3-o2a-units-ratio.csv" --x L --y ratio --series algo --log2x --ymin 1 --ymax 3 \
  --title "C3 Fig. 4: one-to-all, p = 256, units / best units at each L (clipped at 3)" \
  --xlabel "log2 of message size L (bytes)" --ylabel "units / best units" --out "$img/repro-c3-one-to-all-units.svg"
"$rp" plot --csv "$tmp/c3-o2a-time-ratio.csv" --x L --y ratio --series algo --log2x --ymin 1 --ymax 2 \
  --title "C3 Fig. 5: one-to-all, emulated Delta 16x16, time / best time (clipped at 2)" \
  --xlabel "log2 of message size L (bytes)" --ylabel "time / best time" --out "$img/repro-c3-one-to-all-time.svg"
"$rp" plot --csv "$tmp/c3-a2a-units-ratio.csv" --x L --y ratio --series algo --log2x --ymin 1 --ymax 3 \
  --title "C3 Fig. 6: all-to-all, p = 256, units / best units at each L (clipped at 3)" \
  --xlabel "log2 of message size L (bytes)" --ylabel "units / best units" --out "$img/repro-c3-all-to-all-units.svg"
"$rp" plot --csv "$tmp/c3-a2a-time-ratio.csv" --x L --y ratio --series algo --log2x --ymin 1 --ymax 3 \
  --title "C3 Fig. 7: all-to-all, emulated Delta 16x16, time / best time (clipped at 3)" \
  --xlabel "log2 of message size L (bytes)" --ylabel "time / best time" --out "$img/repro-c3-all-to-all-time.svg"
"$rp" plot --csv "$tmp/c3-o2a.csv" --x L --y time_us --series algo --yscale 0.001 --ymin 0 \
  --title "C3 Fig. 5: one-to-all on the emulated Delta (16x16, isend)" \
  --xlabel "message size L (bytes)" --ylabel "time (ms)" --out "$img/repro-c3-one-to-all-time-abs.svg"
"$rp" plot --csv "$tmp/c3-a2a.csv" --x L --y time_us --series algo --yscale 0.001 --ymin 0 \
  --title "C3 Fig. 7: all-to-all on the emulated Delta (16x16, isend)" \
  --xlabel "message size L (bytes)" --ylabel "time (ms)" --out "$img/repro-c3-all-to-all-time-abs.svg"

spread16k=$(awk -F, 'NR > 1 && $2 == "16384" && $1 !~ /-br$/ {
  if (lo == "" || $5 < lo) lo = $5; if ($5 > hi) hi = $5 } END {printf "%.0f", 100 * (hi - lo) / lo}' "$tmp/c3-o2a.csv")
o2a_units_win=$(winners "$tmp/c3-o2a.csv" L algo comm_units)
o2a_paper_win=$(winners "$tmp/c3-o2a-paper.csv" L algo comm_units)
o2a_time_win=$(winners "$tmp/c3-o2a.csv" L algo time_us)
a2a_units_win=$(winners "$tmp/c3-a2a.csv" L algo comm_units)
a2a_time_win=$(winners "$tmp/c3-a2a.csv" L algo time_us)
# How far logp-lev-rec:0.75 is from the best emulated time, at worst over all L.
rec_gap=$(ratio_csv "$tmp/c3-o2a.csv" L algo time_us |
  awk -F, '$2 == "logp-lev-rec:0.75" && $3 > m {m = $3} END {printf "%.1f", 100 * (m - 1)}')
mid_gap=$(ratio_csv "$tmp/c3-o2a.csv" L algo time_us |
  awk -F, '($2 == "2-lev-rec" || $2 == "3-lev-sq") && $1 >= 256 && $3 > m {m = $3} END {printf "%.0f", 100 * (m - 1)}')
br_over=$(ratio_csv "$tmp/c3-o2a.csv" L algo time_us |
  awk -F, '$2 ~ /-br$/ && $1 >= 256 && (m == "" || $3 < m) {m = $3} END {printf "%.1f", m}')
# Whether the two broadcasts are the two slowest at every L >= 256 (the paper: "the worst").
br_worst=$(awk -F, 'NR > 1 && $2 >= 256 {n[$2]++; if ($1 ~ /-br$/) b[$2] = (b[$2] == "" || $5 < b[$2]) ? $5 : b[$2]; else if ($5 > o[$2]) o[$2] = $5}
  END {ok = "yes"; for (L in n) if (b[L] <= o[L]) ok = "no"; print ok}' "$tmp/c3-o2a.csv")
# sys-br against our-br (the system's tree against the binomial heap), at worst and best over L.
sys_our=$(awk -F, 'NR > 1 {t[$1, $2] = $5; if (!($2 in s)) {s[$2] = 1; o[++n] = $2}}
  END {for (i = 1; i <= n; i++) {r = t["1-lev-sys-br", o[i]] / t["1-lev-our-br", o[i]]; if (lo == "" || r < lo) lo = r; if (r > hi) hi = r}
       printf "%.2f–%.2f", lo, hi}' "$tmp/c3-o2a.csv")

# From the unit tables: "algo set-ups slope" per row ("255s + 0.548828L + 10").
tab_terms() { awk '$2 ~ /s$/ && $4 ~ /L$/ {s = $2; sub(/s$/, "", s); l = $4; sub(/L$/, "", l); print $1, s, l}' "$1"; }
tab_terms "$tmp/c3-o2a-table.txt" > "$tmp/c3-o2a-terms.txt"
tab_terms "$tmp/c3-a2a-table.txt" > "$tmp/c3-a2a-terms.txt"
slope() { awk -v a="$2" '$1 == a {printf "%.1f", $3}' "$1"; }
setups() { awk -v a="$2" '$1 == a {print $2}' "$1"; }
# The paper's Fig. 3 slopes (s = 8): 1-lev-dir 0.55, 2-lev-rec 1.23, 3-lev-sq 0.93 (non-binomial).
slope_gap=$(awk 'BEGIN {p["1-lev-dir"] = 0.55; p["2-lev-rec"] = 1.23; p["3-lev-sq"] = 0.93}
  ($1 in p) {d = $3 / p[$1] - 1; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.0f", 100 * m}' "$tmp/c3-o2a-terms.txt")
# Where the paper's formulas for 3-lev-sq (192 + 0.93L) and 1-lev-dir (2048 + 0.55L) cross.
cross_kb=$(awk 'BEGIN {printf "%.1f", (2048 - 192) / (0.93 - 0.55) / 1024}')
# Below 256 B: how far 2-lev-rec and 3-lev-sq trail the best emulated time at worst.
low_gap=$(ratio_csv "$tmp/c3-o2a.csv" L algo time_us |
  awk -F, '($2 == "2-lev-rec" || $2 == "3-lev-sq") && $1 < 256 && $3 > m {m = $3} END {printf "%.0f", 100 * (m - 1)}')
sq16=$(awk -F, 'NR > 1 && $2 == 16 {t[$1] = $5} END {print (t["logp-lev-sq"] < t["2-lev-rec"] && t["logp-lev-sq"] < t["3-lev-sq"]) ? "yes" : "no"}' "$tmp/c3-o2a.csv")
# The Delta profile's send set-up and link rate, as the text quotes them.
d_setup=$(prof delta send_overhead)
d_link=$(prof delta link_mb_per_s)
# All-to-all: the first L at which a 1-level algorithm has the least emulated time; at 16 B the
# butterfly against 2-lev-rc.
a2a_one_lev=$(awk -F, 'NR > 1 {if (!($2 in b) || $5 < b[$2]) {b[$2] = $5; w[$2] = $1}; if (!($2 in seen)) {seen[$2] = 1; o[++n] = $2}}
  END {for (i = 1; i <= n; i++) if (w[o[i]] ~ /^1-lev/) {print o[i]; exit}}' "$tmp/c3-a2a.csv")
bfly_rc16=$(awk -F, 'NR > 1 && $2 == 16 {t[$1] = $5} END {printf "%.2f", t["logp-lev-bfly"] / t["2-lev-rc"]}' "$tmp/c3-a2a.csv")

# §3: one-to-one on the mesh, the hypercube and the tree machine: the calculator's units on the
# one-to-one plan against the paper's three closed forms (s = 8, l = 512).
jget() { printf '%s\n' "$1" | sed -n "s/.*\"$2\": *\([-0-9.e+]*\).*/\1/p" | head -1; }
{
  echo "machine,p,L,paper,ours,C_l,C_p"
  for m in mesh hypercube tree; do
    for p in 16 64 256 1024; do
      for L in 16 4096 16384; do
        j=$("$pb" c3 --op one-to-one --algo 1-lev-dir --p "$p" --L "$L" --machine "$m" --json)
        ours=$(jget "$j" comm_units); cl=$(jget "$j" C_l); cp=$(jget "$j" C_p)
        awk -v m="$m" -v p="$p" -v L="$L" -v o="$ours" -v cl="$cl" -v cp="$cp" 'BEGIN {
          P = int((L + 511) / 512); s = 8; q = sqrt(p); g = log(p) / log(2)
          if (m == "mesh") f = s + 2 / 3 * q + P * (2 + 5 / 3 * q)
          else if (m == "hypercube") f = s + g / 2 + P * (4 + g / 2)
          else f = s + g + P * (2 + p + g)
          printf "%s,%d,%d,%.2f,%.2f,%.2f,%.2f\n", m, p, L, f, o, cl, cp }'
      done
    done
  done
} > "$tmp/c3-o2o.csv"
o2o_diff=$(awk -F, 'NR > 1 {d = $5 - $4; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.2f", m}' "$tmp/c3-o2o.csv")
o2o_rows=$(awk 'END {print NR - 1}' "$tmp/c3-o2o.csv")

echo "## Hambrusch & Khokhar (C³) §3: one-to-one on the mesh, the hypercube and the tree machine"
echo
echo "§3 charges one-to-one routing (every processor sends L bytes to a unique destination) on a"
echo "square mesh (b = √p, h = ⅔√p), a hypercube (b = p/2, h = ½log p) and a tree machine (b = 1,"
echo "h = log p): s + ⅔√p + ⌈L/l⌉(2 + 5/3·√p), s + ½log p + ⌈L/l⌉(4 + ½log p) and"
echo "s + log p + ⌈L/l⌉(2 + p + log p) units. The paper gives formulas only (no figure). Ours: the"
echo "unit calculator applied to the one-to-one plan (\`postbox c3 --op one-to-one --algo 1-lev-dir"
echo "--machine mesh|hypercube|tree\`, docs/c3.md), with the Delta's s = 8 and l = 512:"
echo
csv_md "$tmp/c3-o2o.csv"
echo
echo "Over the $o2o_rows cases the largest difference between the paper's formula and our units is"
# §3: which congestion term dominates, per machine: rows where C_p > C_l (hypercube), C_l > C_p
# (tree), and C_l / C_p on the mesh.
read -r hc_k hc_n tr_k tr_n mr_lo mr_hi < <(awk -F, 'NR > 1 {if ($1 == "hypercube") {hn++; if ($7 > $6) hk++}
  if ($1 == "tree") {tn++; if ($6 > $7) tk++}
  if ($1 == "mesh") {r = $6 / $7; if (lo == "" || r < lo) lo = r; if (r > hi) hi = r}}
  END {printf "%d %d %d %d %.2f %.2f\n", hk, hn, tk, tn, lo, hi}' "$tmp/c3-o2o.csv")
echo "$o2o_diff units $(verdict_claim C3.s3 "C³ §3" "one-to-one units on mesh, hypercube and tree machine equal the paper's formulas" "§3 formulas" claim "d=$o2o_diff" "d <= 0.005" "largest difference $o2o_diff units over $o2o_rows cases" "not explained")."
echo "Which congestion term dominates: processor congestion C_p on the hypercube in $hc_k of $hc_n cases"
echo "$(verdict_claim C3.s3.cube "C³ §3" "processor congestion dominates on the hypercube (C_p > C_l)" "§3" claim "k=$hc_k;n=$hc_n" "k == n" "C_p > C_l in $hc_k of $hc_n cases" "published: the paper's own §3 charges give C_l = C_p at p = 16 (⌈(p − 1)/b⌉ = 2 = ½ log p), a tie (C³ paper, §3)"),"
echo "link congestion C_l on the tree machine in $tr_k of $tr_n $(verdict_claim C3.s3.tree "C³ §3" "link congestion dominates on the tree machine (C_l > C_p)" "§3" claim "k=$tr_k;n=$tr_n" "k == n" "C_l > C_p in $tr_k of $tr_n cases" "not explained"); on the mesh, where the paper"
echo "names no winner, C_l / C_p is $mr_lo to $mr_hi."
echo

echo "## Hambrusch & Khokhar (C³) Figs. 3-7: one-to-all and all-to-all on a 256-node Delta"
echo
echo "The paper's Figs. 4-7 are plots whose curves did not survive the text extraction (only their"
echo "captions did); what survives is Fig. 3 (the unit formulas) and the text's statements of which"
echo "algorithm wins where. So each figure below is compared with those statements. Setting, as in"
echo "§4: p = 256 on a 16×16 mesh (the paper says \"256-processor Delta\"; we take the square"
echo "submesh of the 16×32 profile, row-major ranks, root 0), messages of 16 B to 16 KB,"
echo "non-blocking sends and receives. Units come from the unit calculator applied to the plans"
echo "(\`postbox c3\`, docs/c3.md: h = 10, l = 512, b = 16, s = 8 units); times from running the same"
echo "plans on the \`delta\` profile with isend (\`tools/repro/repro_driver.cpp\`)."
echo
echo "### Fig. 3: units of the one-to-all algorithms"
echo
echo '```'
cat "$tmp/c3-o2a-table.txt"
echo '```'
echo
echo "Paper (Fig. 3, with s = 8): 1-lev-dir 2048 + 0.55L, 1-lev-our-br 64 + 27L, 2-lev-rec 256 + 1.23L,"
echo "3-lev-sq 192 + 0.93L, logp-lev-sq 64 + 5.29L. Per byte of L:"
echo
echo "| algorithm | paper's slope (Fig. 3) | ours | verdict |"
echo "|---|---|---|---|"
for a in "1-lev-dir 0.55" "1-lev-our-br 27" "2-lev-rec 1.23" "3-lev-sq 0.93" "logp-lev-sq 5.29"; do
  set -- $a
  ours=$(awk -v a="$1" '$1 == a {printf "%.3f", $3}' "$tmp/c3-o2a-terms.txt")
  case $1 in
    *br|logp-lev-sq) cause="not explained; suspected: the paper's number fits a rule that charges a forwarding processor its receive and its send in one step (Σ_k (3 + h_k)·⌈255L/512⌉ = 27L for 1-lev-our-br, docs/c3.md), a reconstruction from arithmetic that its text does not state" ;;
    *) cause="not explained" ;;
  esac
  echo "| $1 | $2 | $ours | $(verdict_value "C3.F3.$1" "C³ Fig. 3" "one-to-all units per byte of L, $1, p = 256" "$2 (Fig. 3)" "$2" "$ours" "$cause") |"
done
echo
# Set-up counts: ours against the paper's with p − 1 written for each p (256 → 255, 16 → 15, 4 → 3).
su() { setups "$tmp/c3-o2a-terms.txt" "$1"; }
echo "Set-ups (the s coefficients): ours $(su 1-lev-dir), $(su 1-lev-our-br), $(su 2-lev-rec), $(su 3-lev-sq), $(su logp-lev-sq) against the"
echo "paper's 256, 8, 32, 24, 8, which count p sends where a processor sends to the p − 1 others:"
echo "256 − 1, 8, 2·(16 − 1), (16 − 1) + 2·(4 − 1), 8 $(verdict_claim C3.F3.setups "C³ Fig. 3" "set-up counts equal the paper's with p − 1 for p" "Fig. 3" claim "a=$(su 1-lev-dir);b=$(su 1-lev-our-br);c=$(su 2-lev-rec);d=$(su 3-lev-sq);e=$(su logp-lev-sq)" "a == 255 && b == 8 && c == 30 && d == 21 && e == 8" "$(su 1-lev-dir), $(su 1-lev-our-br), $(su 2-lev-rec), $(su 3-lev-sq), $(su logp-lev-sq)" "not explained")."
echo "How the paper charged its binomial rows (1-lev-our-br, logp-lev-sq) is not in its text; all it"
echo "states (§4.1) is a bound for logp-lev-sq: \"CBH(p) ≤ s log p + c1 * ⌈Lp/l⌉ * h, for a constant"
echo "c1 ≤ 1.5\", i.e. at most 1.5·10·256/512 = 7.5 units per byte. Our charge is the §2 superstep rule"
echo "(docs/c3.md); the paper's 27L is matched by charging a forwarding processor both its receive and"
echo "its send in a step — our reconstruction from the arithmetic, not the paper's words. Both slopes"
echo "keep the stated bound: ours $(slope "$tmp/c3-o2a-terms.txt" logp-lev-sq), the paper's 5.29"
echo "$(verdict_claim C3.F3.bound "C³ §4.1" "logp-lev-sq within the paper's bound s log p + 1.5⌈Lp/l⌉h (≤ 7.5 units per byte)" "§4.1" claim "ours=$(slope "$tmp/c3-o2a-terms.txt" logp-lev-sq);bound=7.5" "ours <= bound" "$(slope "$tmp/c3-o2a-terms.txt" logp-lev-sq) units per byte" "not explained")."
echo
echo "### Figs. 4 and 5: one-to-all, units and emulated time against L"
echo
echo "Communication units (ours):"
echo
pivot_md "$tmp/c3-o2a.csv" L algo comm_units 1 0
echo
echo "Emulated time (ms) on the Delta profile:"
echo
pivot_md "$tmp/c3-o2a.csv" L algo time_us 0.001 2
echo
echo "![units](img/repro-c3-one-to-all-units.svg) ![time](img/repro-c3-one-to-all-time.svg)"
echo
echo "![time, absolute](img/repro-c3-one-to-all-time-abs.svg)"
echo
echo "| who wins | by L |"
echo "|---|---|"
echo "| paper's Fig. 3 formulas (s = 8) | $o2a_paper_win |"
echo "| paper's text on its units | 3-lev-sq up to 6 KB, 1-lev-dir above |"
echo "| our units | $o2a_units_win |"
echo "| paper's measurements (Fig. 5, text) | 2-lev-rec and 3-lev-sq consistently better than the rest; logp-lev-rec(0.75) optimal or near optimal at every size; the broadcasts worst; 1-lev-dir reasonable only for large L |"
echo "| emulated | $o2a_time_win |"
echo
# Sampled L at which our units' winner is the paper's formulas' winner.
read -r win_eq win_n < <(awk -F, 'NR == FNR {if (FNR > 1) {pt[$1] = 1; if (!($2 in pb) || $3 + 0 < pb[$2]) {pb[$2] = $3 + 0; pw[$2] = $1}}; next}
  FNR > 1 && ($1 in pt) {if (!($2 in ob) || $3 + 0 < ob[$2]) {ob[$2] = $3 + 0; ow[$2] = $1}}
  END {for (L in pw) {n++; if (ow[L] == pw[L]) k++}; print k + 0, n + 0}' "$tmp/c3-o2a-paper.csv" "$tmp/c3-o2a.csv")
# Where our unit formulas for 3-lev-sq and 1-lev-dir cross (bytes).
cross_ours=$(awk '$1 == "1-lev-dir" {s1 = $2; l1 = $3} $1 == "3-lev-sq" {s3 = $2; l3 = $3} END {printf "%.0f", (8 * (s1 - s3)) / (l3 - l1)}' "$tmp/c3-o2a-terms.txt")
# Emulated: at how many L 2-lev-rec and 3-lev-sq both beat 1-lev-dir and the two broadcasts; at
# how many L the two broadcasts are the two slowest; 1-lev-dir over the best at the smallest and
# the largest L.
# o2a_counts CSV: "mid_ok n brw_ok n" — at how many L 2-lev-rec and 3-lev-sq both beat 1-lev-dir
# and the broadcasts, and at how many L the two broadcasts are the two slowest.
o2a_counts() {
  awk -F, 'NR > 1 {t[$1, $2] = $5 + 0; if (!($2 in s)) {s[$2] = 1; o[++n] = $2}; a[$1] = 1}
  END {for (i = 1; i <= n; i++) {L = o[i]; w = t["1-lev-dir", L]; if (t["1-lev-our-br", L] < w) w = t["1-lev-our-br", L]; if (t["1-lev-sys-br", L] < w) w = t["1-lev-sys-br", L]
         if (t["2-lev-rec", L] < w && t["3-lev-sq", L] < w) m++
         b = t["1-lev-our-br", L]; if (t["1-lev-sys-br", L] < b) b = t["1-lev-sys-br", L]; ok = 1
         for (x in a) if (x !~ /-br$/ && t[x, L] >= b) ok = 0; k += ok}
       print m + 0, n, k + 0, n}' "$1"
}
read -r mid_ok mid_n brw_ok brw_n < <(o2a_counts "$tmp/c3-o2a.csv")
read -r dir_lo dir_hi < <(ratio_csv "$tmp/c3-o2a.csv" L algo time_us | awk -F, '$2 == "1-lev-dir" {r[$1 + 0] = $3; if (lo == "" || $1 + 0 < lo) lo = $1 + 0; if ($1 + 0 > hi) hi = $1 + 0} END {printf "%.2f %.2f\n", r[lo], r[hi]}')
echo "Among the five algorithms of Fig. 3, our units pick the paper's formulas' winner at $win_eq of $win_n sampled L"
echo "$(verdict_claim C3.F4.units "C³ Fig. 4" "our units pick the winner of the paper's Fig. 3 formulas at each sampled L" "Fig. 3 formulas" order "same=$win_eq;all=$win_n" "same == all" "$win_eq of $win_n L" "not explained")."
echo "The text reads the units as \"3-lev-sq best up to 6 Kbytes, 1-lev-dir above\"; our unit formulas"
echo "for the two cross at $cross_ours B $(verdict_value C3.F4.cross "C³ §4.1" "message size above which 1-lev-dir has fewer units than 3-lev-sq (bytes)" "6 Kbytes (§4.1)" 6144 "$cross_ours" "published: the paper's own Fig. 3 formulas cross at $cross_kb KB (C³ paper, Fig. 3), so its 6 Kbytes is a round figure, not what its formulas give"),"
echo "the paper's Fig. 3 formulas at $cross_kb KB. The emulated times against the paper's measurements"
echo "(Fig. 5, its text): logp-lev-rec(0.75) is at worst $rec_gap% above the best emulated time"
echo "$(verdict_claim C3.F5.rec "C³ Fig. 5" "logp-lev-rec(0.75) optimal or near optimal (within 10% of the best) at every L, p = 256" "§4.1" claim "gap=$rec_gap" "gap <= 10" "at worst $rec_gap% above the best" "not explained");"
echo "2-lev-rec and 3-lev-sq both beat 1-lev-dir and the two broadcasts at $mid_ok of $mid_n L"
echo "$(verdict_claim C3.F5.mid "C³ Fig. 5" "2-lev-rec and 3-lev-sq consistently better than 1-lev-dir and the broadcasts" "§4.1" order "ok=$mid_ok;all=$mid_n" "ok == all" "$mid_ok of $mid_n L" "not explained; suspected: above one packet every algorithm waits for the root's injection channel, which carries all 255·L bytes, so the times converge and small pipelining effects order them")"
echo "(from 256 B on they are within $mid_gap% of the best; below that they trail by up to $low_gap%$([[ $sq16 == yes ]] && echo ", and at 16 B logp-lev-sq beats both"));"
echo "the two broadcasts are the two slowest at $brw_ok of $brw_n L"
echo "$(verdict_claim C3.F5.br "C³ Fig. 5" "the two broadcasts give the worst performance" "§4.1" order "ok=$brw_ok;all=$brw_n" "ok == all" "$brw_ok of $brw_n L" "not explained; suspected: at small L 1-lev-dir's 255 set-ups of $d_setup µs cost more than the broadcast of a short long message")"
echo "(from 256 B up at least ${br_over}× the best; 1-lev-sys-br, \"the system's broadcast\" — ours is the tree"
echo "\`bcast\` uses by default, recursive doubling — takes $sys_our× the time of 1-lev-our-br); 1-lev-dir pays"
echo "$(setups "$tmp/c3-o2a-terms.txt" 1-lev-dir) set-ups of $d_setup µs ($(awk -v n="$(setups "$tmp/c3-o2a-terms.txt" 1-lev-dir)" -v s="$d_setup" 'BEGIN {printf "%.1f", n * s / 1000}') ms) and is ${dir_lo}× the best at the smallest L and ${dir_hi}× at the largest"
echo "$(verdict_claim C3.F5.dir "C³ Fig. 5" "1-lev-dir a reasonable choice only for large L (within 10% of the best at 16 KB, not at 16 B)" "§4.1" claim "lo=$dir_lo;hi=$dir_hi" "hi <= 1.10 && lo > 1.10" "${dir_lo}× the best at 16 B, ${dir_hi}× at 16 KB" "not explained")."
echo "Above one packet every algorithm is limited by the root's injection channel, which must carry"
echo "all 255·L bytes at $d_link MB/s, so the times converge (all but the binomial broadcasts within"
echo "$spread16k% of each other at 16 KB); the units have no such common bottleneck term — the part of the"
echo "model the paper says it \"does not attempt to evaluate\". (The paper's §4 converts a set-up to 8"
echo "units assuming 12.5 MB/s for the Delta's network; profiles/delta.toml uses the brochure's $d_link MB/s"
echo "per channel. The units above follow the paper's 8; the emulated times use $d_link MB/s.)"
echo
echo "### Figs. 6 and 7: all-to-all, units and emulated time against L"
echo
echo '```'
cat "$tmp/c3-a2a-table.txt"
echo '```'
echo
echo "Communication units (ours):"
echo
pivot_md "$tmp/c3-a2a.csv" L algo comm_units 1 0
echo
echo "Emulated time (ms) on the Delta profile:"
echo
pivot_md "$tmp/c3-a2a.csv" L algo time_us 0.001 2
echo
echo "![units](img/repro-c3-all-to-all-units.svg) ![time](img/repro-c3-all-to-all-time.svg)"
echo
echo "![time, absolute](img/repro-c3-all-to-all-time-abs.svg)"
echo
echo "| who wins | by L |"
echo "|---|---|"
echo "| paper's measurements (Fig. 7, text) | 2-lev-r,c best for L ≤ 256 B, 2-lev-sq second; 1-lev-perm with exclusive-or best for larger L; logp-lev-bfly expensive for large L |"
echo "| paper's units (Fig. 6, text) | all 1-level algorithms charged the same; no numbers survive |"
echo "| our units | $a2a_units_win |"
echo "| emulated | $a2a_time_win |"
echo
xor_from=$(sed -n 's/.*1-lev-perm:xor (L \([0-9–]*\)).*/\1/p' <<<"$a2a_time_win")
# At the longest L: the algorithms by emulated time, dearest first ("name time_ms" per line), and
# the butterfly's place among them (the paper: logp-lev-bfly expensive for large L).
a2a_dear=$(awk -F, 'NR > 1 {L[NR] = $2 + 0; a[NR] = $1; t[NR] = $5; if ($2 + 0 > m) m = $2 + 0}
  END {for (i in L) if (L[i] == m) printf "%s %.1f\n", a[i], t[i] / 1000}' "$tmp/c3-a2a.csv" | sort -k2,2 -g -r)
a2a_maxL=$(awk -F, 'NR > 1 && $2 + 0 > m {m = $2 + 0} END {print m}' "$tmp/c3-a2a.csv")
dear1=$(sed -n 1p <<<"$a2a_dear"); dear2=$(sed -n 2p <<<"$a2a_dear")
bfly_place=$(awk '$1 == "logp-lev-bfly" {print NR}' <<<"$a2a_dear")
bfly_ms=$(awk '$1 == "logp-lev-bfly" {print $2}' <<<"$a2a_dear")
n_a2a=$(wc -l <<<"$a2a_dear")
case $bfly_place in 1) bfly_nth=1st ;; 2) bfly_nth=2nd ;; 3) bfly_nth=3rd ;; *) bfly_nth=${bfly_place}th ;; esac
# The paper's measured statements (§4.3), counted on the emulated table: 2-lev-rc best at L ≤ 256;
# 2-lev-sq second at L ≤ 256; 1-lev-perm:xor best at L > 256.
# a2a_counts CSV: "rc_ok rc_n sq_ok xor_ok xor_n" as above, for one run's CSV.
a2a_counts() { awk -F, 'NR > 1 {t[$1, $2] = $5 + 0; a[$1] = 1; if (!($2 in s)) {s[$2] = 1; o[++n] = $2}}
  END {for (i = 1; i <= n; i++) {L = o[i]; b = ""; c = ""
         for (x in a) {if (b == "" || t[x, L] < t[b, L]) b = x}
         for (x in a) if (x != b && (c == "" || t[x, L] < t[c, L])) c = x
         if (L + 0 <= 256) {rn++; if (b == "2-lev-rc") rk++; if (c == "2-lev-sq") sk++} else {xn++; if (b == "1-lev-perm:xor") xk++}}
       print rk + 0, rn + 0, sk + 0, xk + 0, xn + 0}' "$1"; }
read -r rc_ok rc_n sq_ok xor_ok xor_n < <(a2a_counts "$tmp/c3-a2a.csv")
# Sensitivity (runs started at the top): the same counts for each variant.
wait "$c3_sens_pid"
{
  echo "variant,published,rk,rn,sk,xk,xn"
  echo "profiles/delta.toml,profile,$(a2a_counts "$tmp/c3-a2a-sens-0.csv" | tr ' ' ,)"
  i=0
  for v in "${c3_sens_variants[@]}"; do
    i=$((i + 1)); IFS='|' read -r pub label kv <<< "$v"
    echo "$label,$pub,$(a2a_counts "$tmp/c3-a2a-sens-$i.csv" | tr ' ' ,)"
  done
} > "$tmp/sens-c3f7.csv"
echo "Paper (§4.3, measured): 2-lev-r,c best for L ≤ 256 B — emulated best at $rc_ok of $rc_n such L"
echo "$(verdict_claim C3.F7.rc "C³ Fig. 7" "2-lev-r,c best for L ≤ 256 B" "§4.3" order "ok=$rc_ok;all=$rc_n" "ok == all" "best at $rc_ok of $rc_n L ≤ 256 B" "$(sens_cause "$tmp/sens-c3f7.csv" 'x["rk"] " of " x["rn"]' 'x["rk"] == x["rn"]' "no parameter in the sensitivity table (p = 64) brings it to the paper's side; suspected: the emulator's links have no buffering limits and no software flow control, so 1-lev-dir's flooding costs less than on the real machine")")"
echo "(at 16 B the butterfly takes ${bfly_rc16}× 2-lev-rc's time: with $d_setup µs set-ups at both ends the number of messages"
echo "per node, $(setups "$tmp/c3-a2a-terms.txt" logp-lev-bfly) against $(setups "$tmp/c3-a2a-terms.txt" 2-lev-rc), decides); 2-lev-sq second for small L — second at $sq_ok of $rc_n"
echo "$(verdict_claim C3.F7.sq "C³ Fig. 7" "2-lev-sq second best for L ≤ 256 B" "§4.3" order "ok=$sq_ok;all=$rc_n" "ok == all" "second at $sq_ok of $rc_n L ≤ 256 B" "$(sens_cause "$tmp/sens-c3f7.csv" 'x["sk"] " of " x["rn"]' 'x["sk"] == x["rn"]' "no parameter in the sensitivity table (p = 64) brings it to the paper's side")");"
echo "1-lev-perm with exclusive-or best for larger L — best at $xor_ok of $xor_n L above 256 B"
echo "$(verdict_claim C3.F7.xor "C³ Fig. 7" "1-lev-perm with exclusive-or best for L > 256 B" "§4.3" order "ok=$xor_ok;all=$xor_n" "ok == all" "best at $xor_ok of $xor_n L > 256 B" "$(sens_cause "$tmp/sens-c3f7.csv" 'x["xk"] " of " x["xn"]' 'x["xk"] == x["xn"]' "no parameter in the sensitivity table (p = 64) brings it to the paper's side; suspected: as for 2-lev-r,c, flooding (1-lev-dir) is cheap on links without buffering limits")")."
echo
read -r b_rk b_rn b_sk b_xk b_xn < <(awk -F, 'NR == 2 {print $3, $4, $5, $6, $7}' "$tmp/sens-c3f7.csv")
echo "Sensitivity of [C3.F7.rc], [C3.F7.sq] and [C3.F7.xor], at p = 64 (8×8; the profile gives $b_rk, $b_sk and $b_xk there"
echo "against $rc_ok, $sq_ok and $xor_ok at p = 256 above), one parameter of profiles/delta.toml per row changed"
echo "(\"published\" no: none of our sources gives the value; yes: another paper states it):"
echo
sens_md "$tmp/sens-c3f7.csv" "2-lev-r,c best, L ≤ 256 B" "of (paper: all)" "2-lev-sq second, L ≤ 256 B (paper: all)" "1-lev-perm:xor best, L > 256 B" "of (paper: all)"
echo
echo "[C3.F7.rc]: $(sens_says "$tmp/sens-c3f7.csv" 'x["rk"] " of " x["rn"]' 'x["rk"] == x["rn"]' "2-lev-r,c")."
echo "[C3.F7.sq]: $(sens_says "$tmp/sens-c3f7.csv" 'x["sk"] " of " x["rn"]' 'x["sk"] == x["rn"]' "2-lev-sq")."
echo "[C3.F7.xor]: $(sens_says "$tmp/sens-c3f7.csv" 'x["xk"] " of " x["xn"]' 'x["xk"] == x["xn"]' "1-lev-perm:xor")."
echo
echo "The emulated switch-over to a 1-level algorithm comes at L = $a2a_one_lev B, and 1-lev-dir"
echo "(unsynchronised flooding) is best until the exclusive-or permutation takes over (L ${xor_from:-: never})."
echo "logp-lev-bfly, \"expensive for large message sizes\" (§4.3): at L = $a2a_maxL B the dearest are ${dear1% *}"
echo "(${dear1##* } ms) and ${dear2% *} (${dear2##* } ms); the butterfly, which sends every byte log p times, is"
echo "$bfly_nth of $n_a2a (${bfly_ms} ms) $(verdict_claim C3.F7.bfly "C³ Fig. 7" "logp-lev-bfly among the three dearest at the longest L" "§4.3" order "place=$bfly_place" "place <= 3" "$bfly_nth dearest of $n_a2a at $a2a_maxL B" "not explained")."
echo "Our unit calculator separates the 1-level algorithms a little through its submachine rule"
echo "(docs/c3.md), where the paper's metric charges them all the same (§4.3), and like the emulator"
echo "it ranks XOR first among them at the longest messages."
echo
# ---------------- §4.1-4.2 over the paper's machine sizes: one-to-all against all-to-one ----------------
c3_common=1-lev-dir,2-lev-rec,3-lev-sq,logp-lev-sq  # the paper's four all-to-one algorithms (§4.2)
for pm in "16 4x4" "64 8x8" "256 16x16"; do
  set -- $pm
  "$rp" c3 --op one-to-all --algos "$c3_common,logp-lev-rec:0.75" --L "$o2a_L" --p "$1" --mesh "$2" --machine delta --sends nb > "$tmp/c3-o2a-p$1.csv"
  "$rp" c3 --op all-to-one --algos "$c3_common" --L "$o2a_L" --p "$1" --mesh "$2" --machine delta --sends nb > "$tmp/c3-a2o-p$1.csv"
done
# best4 CSV: "L algo" — the least emulated time among the four common algorithms at each L.
best4() { awk -F, 'NR > 1 && $1 != "logp-lev-rec:0.75" {if (!($2 in b) || $5 + 0 < b[$2]) {b[$2] = $5 + 0; w[$2] = $1}; if (!($2 in s)) {s[$2] = 1; o[++n] = $2}}
                   END {for (i = 1; i <= n; i++) print o[i], w[o[i]]}' "$1"; }
echo "### §4.1-4.2 on 16, 64 and 256 processors: one-to-all against all-to-one"
echo
echo "The paper ran one-to-all on 16 to 256 processors (§4.1: logp-lev-rec(0.75) \"gives optimal or near"
echo "optimal results for all machine and message sizes\") and all-to-one with 1-lev-dir, 2-lev-rec,"
echo "3-lev-sq and logp-lev-sq (§4.2: \"the best one-to-all algorithms did not correspond to the best"
echo "all-to-one algorithms\"; the details are in a report we do not have). Emulated on square submeshes"
echo "(4×4, 8×8, 16×16) of the Delta profile, isend, root 0; the winner among those four algorithms:"
echo
echo "| p | one-to-all winners (emulated) | all-to-one winners (emulated) | L with different winners | logp-lev-rec(0.75) over the best one-to-all, at worst |"
echo "|---|---|---|---|---|"
diff_tot=0; n_tot=0; rec_worst=0
for p in 16 64 256; do
  d=$(paste -d' ' <(best4 "$tmp/c3-o2a-p$p.csv") <(best4 "$tmp/c3-a2o-p$p.csv") | awk '$2 != $4 {k++} END {print k + 0}')
  n=$(best4 "$tmp/c3-o2a-p$p.csv" | wc -l)
  g=$(ratio_csv "$tmp/c3-o2a-p$p.csv" L algo time_us | awk -F, '$2 == "logp-lev-rec:0.75" && $3 > m {m = $3} END {printf "%.1f", 100 * (m - 1)}')
  diff_tot=$((diff_tot + d)); n_tot=$((n_tot + n))
  rec_worst=$(awk -v a="$rec_worst" -v b="$g" 'BEGIN {print (b > a) ? b : a}')
  echo "| $p | $(awk -F, 'NR == 1 || $1 != "logp-lev-rec:0.75"' "$tmp/c3-o2a-p$p.csv" > "$tmp/c3-o2a-p$p-4.csv"; winners "$tmp/c3-o2a-p$p-4.csv" L algo time_us) | $(winners "$tmp/c3-a2o-p$p.csv" L algo time_us) | $d of $n | $g% |"
done
echo
echo "The winners differ at $diff_tot of the $n_tot (p, L) cases"
echo "$(verdict_claim C3.a2o "C³ §4.2" "the best one-to-all algorithm is not the best all-to-one algorithm (at more than half of the (p, L) cases)" "§4.2" claim "differ=$diff_tot;all=$n_tot" "2 * differ > all" "winners differ at $diff_tot of $n_tot (p, L)" "not explained")."
echo "logp-lev-rec(0.75) is at worst $rec_worst% above the best one-to-all time over the three machine sizes"
echo "$(verdict_claim C3.F5.rec-p "C³ §4.1" "logp-lev-rec(0.75) within 10% of the best one-to-all at every p in 16, 64, 256 and every L" "§4.1" claim "gap=$rec_worst" "gap <= 10" "at worst $rec_worst% above the best" "not explained")."
echo "(The units of §4.2 are \"almost identical\" to one-to-all's; ours: \`postbox c3 --table --op all-to-one\`,"
echo "docs/c3.md.)"
echo
# Sensitivity of the one-to-all and all-to-one offs (p = 256) to two parameters of
# profiles/delta.toml: the link rate (the C³ paper's 12.5 MB/s) and the receive set-up (the value
# fitted to Bruck's Fig. 3).
profile_with "$here/profiles/delta.toml" "$tmp/delta-c3-12.toml" link_mb_per_s=12.5 'name="delta-c3-12"'
echo "Sensitivity (p = 256): the counts behind [C3.F5.mid], [C3.F5.br] and [C3.a2o] with one parameter of"
echo "profiles/delta.toml changed:"
echo
echo "| profile | one-to-all winners (emulated) | 2-lev-rec and 3-lev-sq beat 1-lev-dir and the broadcasts | broadcasts the two slowest | one-to-all and all-to-one winners differ |"
echo "|---|---|---|---|---|"
for v in "profiles/delta.toml|delta" "links at 12.5 MB/s (C³ §4)|$tmp/delta-c3-12.toml" "receive set-up $r_fit µs (fitted to Bruck Fig. 3)|$tmp/delta-recv-fit.toml"; do
  label=${v%%|*}; prof=${v#*|}
  "$rp" c3 --op one-to-all --algos "$o2a_algos" --L "$o2a_L" --p 256 --mesh 16x16 --machine "$prof" --sends nb > "$tmp/c3-sens-o2a.csv"
  "$rp" c3 --op all-to-one --algos "$c3_common" --L "$o2a_L" --p 256 --mesh 16x16 --machine "$prof" --sends nb > "$tmp/c3-sens-a2o.csv"
  read -r a n b _ < <(o2a_counts "$tmp/c3-sens-o2a.csv")
  awk -F, 'NR == 1 || $1 ~ /^(1-lev-dir|2-lev-rec|3-lev-sq|logp-lev-sq)$/' "$tmp/c3-sens-o2a.csv" > "$tmp/c3-sens-o2a4.csv"
  d=$(paste -d' ' <(best4 "$tmp/c3-sens-o2a4.csv") <(best4 "$tmp/c3-sens-a2o.csv") | awk '$2 != $4 {k++} END {print k + 0}')
  echo "| $label | $(winners "$tmp/c3-sens-o2a.csv" L algo time_us) | $a of $n L | $b of $n L | $d of $n L |"
done
echo
