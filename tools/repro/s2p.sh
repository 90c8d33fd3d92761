# s-to-p paper (Hambrusch et al.), Figs. 2-9: the text. Sourced by tools/repro.sh after
# tools/repro/s2p_data.sh; uses $tmp, $here and lib.sh; writes markdown to stdout. Every number in
# the text is computed here from the CSVs or the profile; the paper's numbers are quoted as such.

# pct_range CSV DIST [XCOL MAXX]: "min % to max %, pays in k of n" for one distribution's rows
# (optionally only those with XCOL < MAXX).
pct_range() {
  awk -F, -v d="$2" -v xc="${3:-}" -v mx="${4:-}" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $(col["dist"]) != d { next }
    xc != "" && $(col[xc]) + 0 >= mx + 0 { next }
    { v = $(col["pct"]) + 0; n++; if (v > 0) k++
      if (n == 1 || v < lo) lo = v; if (n == 1 || v > hi) hi = v }
    END { printf "%+.1f%% to %+.1f%%, pays in %d of %d", lo, hi, k + 0, n }' "$1"
}
# col_range CSV DIST COL [XCOL LO HI]: "min to max" of COL for one distribution (XCOL in [LO, HI]).
col_range() {
  awk -F, -v d="$2" -v c="$3" -v xc="${4:-}" -v lo="${5:-}" -v hi="${6:-}" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $(col["dist"]) != d { next }
    xc != "" && ($(col[xc]) + 0 < lo + 0 || $(col[xc]) + 0 > hi + 0) { next }
    { v = $(col[c]) + 0; if (n++ == 0 || v < a) a = v; if (n == 1 || v > b) b = v }
    END { printf "%.2f to %.2f", a, b }' "$1"
}
# slowest_from CSV XCOL ALGO: the smallest x from which ALGO is the slowest at every larger x.
slowest_from() {
  awk -F, -v xc="$2" -v al="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { x = $(col[xc]); v = $(col["time_us"]) + 0; if (!(x in seen)) { seen[x] = 1; xo[++n] = x }
      if (!(x in mx) || v > mx[x]) { mx[x] = v; w[x] = $(col["algo"]) } }
    END { f = "none"; for (i = n; i >= 1; i--) { if (w[xo[i]] != al) break; f = xo[i] } print f }' "$1"
}
# peak CSV XCOL ALGO: "x t" where ALGO's time is largest.
peak() {
  awk -F, -v xc="$2" -v al="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $(col["algo"]) == al && (m == "" || $(col["time_us"]) + 0 > m) { m = $(col["time_us"]) + 0; x = $(col[xc]) }
    END { printf "%s %.2f\n", x, m / 1000 }' "$1"
}
# flat_to CSV ALGO FACTOR: the largest L up to which ALGO stays within FACTOR of its time at the smallest L.
flat_to() {
  awk -F, -v al="$2" -v f="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $(col["algo"]) == al { v = $(col["time_us"]) + 0; if (t0 == "") t0 = v; if (!stop && v <= f * t0) last = $(col["bytes"]); else stop = 1 }
    END { print last }' "$1"
}
# spread CSV S: "max/min ratio, worst mesh" of Fig. 7's Br_Lin times over the shapes for s = S.
spread() {
  awk -F, -v s="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $(col["s"]) == s {
      v = $(col["time_us"]) + 0; if (n++ == 0 || v < a) a = v; if (n == 1 || v > b) { b = v; w = $(col["mesh"]) } }
    END { printf "%.2f %s\n", b / a, w }' "$1"
}

link=$(prof paragon link_mb_per_s)
sbase=$(prof paragon send_overhead)
rbase=$(prof paragon recv_overhead)
f6_5=$(value "$tmp/s2p-fig6.csv" time_us algo=br-xy-source s=5)
f6_40=$(value "$tmp/s2p-fig6.csv" time_us algo=br-xy-source s=40)
f2_win=$(winners "$tmp/s2p-fig2.csv" s algo time_us)
f3_win=$(winners "$tmp/s2p-fig3.csv" bytes algo time_us)
f4_win=$(winners "$tmp/s2p-fig4.csv" p algo time_us)
f5_win=$(winners "$tmp/s2p-fig5.csv" dist algo time_us)
f6_win=$(winners "$tmp/s2p-fig6.csv" s algo time_us)
ms() { awk -v v="$1" 'BEGIN {printf "%.2f", v / 1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# beaten_by_all CSV XCOL "A B" "C D E": "k n" — at how many x every algorithm of the first list is
# slower than the best of the second.
beaten_by_all() {
  awk -F, -v xc="$2" -v sl="$3" -v fa="$4" 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; ns = split(sl, S, " "); nf = split(fa, F, " "); next}
    {x = $(col[xc]); t[x, $(col["algo"])] = $(col["time_us"]) + 0; if (!(x in seen)) {seen[x] = 1; o[++n] = x}}
    END {for (i = 1; i <= n; i++) {x = o[i]; b = ""; for (j = 1; j <= nf; j++) if (b == "" || t[x, F[j]] < b) b = t[x, F[j]]
           ok = 1; for (j = 1; j <= ns; j++) if (!(t[x, S[j]] > b)) ok = 0; k += ok}; print k + 0, n}' "$1"
}
# r2 CSV ALGO LO HI: the least-squares line's R² of ALGO's time against s for LO ≤ s ≤ HI.
r2() {
  awk -F, -v al="$2" -v lo="$3" -v hi="$4" 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
    $(col["algo"]) == al && $(col["s"]) + 0 >= lo && $(col["s"]) + 0 <= hi {x = $(col["s"]) + 0; y = $(col["time_us"]) / 1000; n++; sx += x; sy += y; sxx += x * x; sxy += x * y; syy += y * y}
    END {b = (n * sxy - sx * sy) / (n * sxx - sx * sx); ss = syy - sy * sy / n
         printf "%.3f", b * (sxy - sx * sy / n) / ss}' "$1"
}
# pays CSV DIST [XCOL MAXX]: "k n", as pct_range counts them.
pays() { pct_range "$@" | sed 's/.*pays in \([0-9]*\) of \([0-9]*\)/\1 \2/'; echo; }

# ---------------- Sensitivity: the runs of tools/repro/s2p_sens.sh ----------------
for pid in "${s2p_sens_pids[@]}"; do wait "$pid"; done
# The numbers each off verdict below tests, as functions of one run's CSVs: the verdicts call them
# on the profile's runs, the sensitivity tables on each variant's.
m2() {  # Fig. 2 CSV: "2-Step's time at s = 100 over s = 10" "the broadcasts' slowest over fastest, worst s"
  echo "$(ratio "$(value "$1" time_us algo=2-step s=100)" "$(value "$1" time_us algo=2-step s=10)")" \
    "$(awk -F, 'NR > 1 && $2 ~ /^br-/ {k = $4; if (!(k in lo) || $6 + 0 < lo[k]) lo[k] = $6 + 0; if ($6 + 0 > hi[k]) hi[k] = $6 + 0}
      END {for (k in lo) if (hi[k] / lo[k] > m) m = hi[k] / lo[k]; printf "%.2f", m}' "$1")"
}
xor_best() { ratio "$(value "$1" time_us algo=xor)" "$(awk -F, 'NR > 1 && (m == "" || $6 + 0 < m) {m = $6 + 0} END {print m}' "$1")"; }
m5() {  # Fig. 5 CSV: "algorithms slower on block and cross" "of" "Br_Lin/best on block" "on cross" "Br_Lin best on both"
  awk -F, 'NR > 1 {t[$2, $3] = $6 + 0; a[$2] = 1; d[$3] = 1; if (!(($3) in b) || $6 + 0 < b[$3]) b[$3] = $6 + 0}
    END {for (x in a) {n++; ok = 1; for (y in d) if (y != "block" && y != "cross" && !(t[x, "block"] > t[x, y] && t[x, "cross"] > t[x, y])) ok = 0; k += ok}
         printf "%d %d %.2f %.2f %s\n", k, n, t["br-lin", "block"] / b["block"], t["br-lin", "cross"] / b["cross"],
           (t["br-lin", "block"] <= b["block"] && t["br-lin", "cross"] <= b["cross"]) ? "yes" : "no"}' "$1"
}
m6() {  # Fig. 6 CSV: "steps of s at which Br_xy_source gets faster" "steps"
  awk -F, 'NR > 1 && $2 == "br-xy-source" {t[++n] = $6 + 0} END {for (i = 2; i <= n; i++) {m++; if (t[i] < t[i - 1]) k++}; print k + 0, m + 0}' "$1"
}
m8() {  # Fig. 8 CSV: "pays on equal" "of" "cross gain min (ms)" "max" "band's worst cost (%)" "Repos_Lin pays" "Repos_xy_source pays" "of"
  local x=$tmp/m8-xy.csv l=$tmp/m8-lin.csv g=$tmp/m8-ms.csv
  pct_csv "$1" dist,s br-xy-source repos-xy-source > "$x"
  pct_csv "$1" dist,s br-lin repos-lin > "$l"
  awk -F, 'NR == 1 {print "dist,s,gain_ms"; next} $2 == "br-xy-source" {b[$3 "," $4] = $6; o[++n] = $3 "," $4} $2 == "repos-xy-source" {r[$3 "," $4] = $6}
    END {for (i = 1; i <= n; i++) printf "%s,%.2f\n", o[i], (b[o[i]] - r[o[i]]) / 1000}' "$1" > "$g"
  echo "$(pays "$x" equal)" "$(col_range "$g" cross gain_ms | sed 's/ to / /')" \
    "$(awk -F, 'NR > 1 && $1 == "band" && (m == "" || $3 < m) {m = $3} END {printf "%.1f", -m}' "$x")" \
    "$(awk -F, 'NR > 1 {if ($3 > 0) k++} END {print k + 0}' "$l")" \
    "$(awk -F, 'NR > 1 {n++; if ($3 > 0) k++} END {print k + 0, n}' "$x")"
}
m9() {  # Fig. 9 CSV: "L < 1 KB at which repositioning pays on cross" "of" "(distribution, L) cases it pays on the others"
  local x=$tmp/m9.csv
  pct_csv "$1" dist,bytes br-xy-source repos-xy-source > "$x"
  echo "$(pays "$x" cross bytes 1024)" "$(for d in equal band block; do pays "$x" "$d" bytes 1024; done | awk '{k += $1} END {print k + 0}')"
}
# The variants' labels (tools/repro/s2p_sens.sh) and files: TAG base is the profile's own runs.
s2p_label() {
  local v
  case $1 in
    base) echo "profiles/paragon.toml (the runs above)" ;;
    L05) echo "L = $((s2p_L / 2)) B (×0.5; L was lost in the extraction)" ;;
    L2) echo "L = $((s2p_L * 2)) B (×2)" ;;
    *) for v in "${s2p_variants[@]}"; do [[ ${v%%|*} == "$1" ]] && { v=${v#*|}; echo "${v%%|*}"; }; done ;;
  esac
}
sf() { if [[ $1 == base ]]; then echo "$tmp/s2p-$2.csv"; else echo "$tmp/s2p-sens$3-$1.csv"; fi; }
s2p_tags=base$(for v in "${s2p_variants[@]}"; do printf ' %s' "${v%%|*}"; done)
{ echo "variant,published,g2,slight"; for t in $s2p_tags L05 L2; do echo "$(s2p_label $t),$([[ $t == base ]] && echo profile || echo no),$(m2 "$(sf $t fig2 2)" | tr ' ' ,)"; done; } > "$tmp/sens-s2p2.csv"
{ echo "variant,published,x4,x16"; for t in $s2p_tags L05 L2; do echo "$(s2p_label $t),$([[ $t == base ]] && echo profile || echo no),$(xor_best "$(sf $t fig4-2 4a)"),$(xor_best "$(sf $t fig4-4 4b)")"; done; } > "$tmp/sens-s2p4.csv"
{ echo "variant,published,k,n,lb,lc,linbest"; for t in $s2p_tags L05 L2; do echo "$(s2p_label $t),$([[ $t == base ]] && echo profile || echo no),$(m5 "$(sf $t fig5 5)" | tr ' ' ,)"; done; } > "$tmp/sens-s2p5.csv"
{ echo "variant,published,k,n"; for t in $s2p_tags; do echo "$(s2p_label $t),$([[ $t == base ]] && echo profile || echo no),$(m6 "$(sf $t fig6 6)" | tr ' ' ,)"; done; } > "$tmp/sens-s2p6.csv"
{ echo "variant,published,eqk,eqn,cmin,cmax,band,lnk,xyk,n"; for t in base $s2p_f8_tags; do echo "$(s2p_label $t),$([[ $t == base ]] && echo profile || echo no),$(m8 "$(sf $t fig8 8)" | tr ' ' ,)"; done; } > "$tmp/sens-s2p8.csv"
{ echo "variant,published,ck,cn,other"; for t in $s2p_tags; do echo "$(s2p_label $t),$([[ $t == base ]] && echo profile || echo no),$(m9 "$(sf $t fig9 9)" | tr ' ' ,)"; done; } > "$tmp/sens-s2p9.csv"
nohit="no parameter in the sensitivity table brings it to the paper's side"
sens_intro() {
  echo "Sensitivity of $1 (one parameter per row changed; \"published\" no: none of our sources gives"
  echo "the value; the first row repeats the numbers of the verdicts above${2:+; $2}):"
  echo
}

echo "## s-to-p broadcasting (Hambrusch et al.) Figs. 2-9 on the Paragon profile"
echo
echo "All runs: the plans of docs/s-to-p.md on the \`paragon\` profile, row-major ranks, blocking"
echo "sends, every source sending L bytes. The profile is Intel's OSF/1 AD with NX as NAS measured it"
echo "(Saini and Simon, RNR-94-016, 1994: 30-35 MB/s, about 100 µs latency): worms move at"
echo "$link MB/s and each message costs $sbase µs at the sender and $rbase µs at the receiver"
echo "(profiles/paragon.toml gives the sources and the reasoning; nothing there was fitted to these"
echo "figures). The paper does not name its operating system; \"Which Paragon\" under Fig. 6 shows"
echo "what SUNMOS would have given. The paper's plots did not survive the text extraction (axis tick"
echo "digits at most) and several of their parameters were lost too; where a parameter was lost we"
echo "chose one and say so."
echo
echo "**The Cray T3D runs are not attempted.** The paper reports T3D results (its abstract: \"for the"
echo "Cray T3D we also demonstrate dependencies between distributions and machine sizes\"), but no T3D"
echo "figure, number or machine size survives in the text we have, so there is nothing to compare an"
echo "emulated T3D with; and profiles/t3d.toml's message-passing overheads are not grounded in a"
echo "published measurement (none was found; the file says so), so its times would judge nothing."
echo
echo "### Fig. 2: time against the number of sources (10×10, equal distribution)"
echo
echo "Lost in the extraction: L (we use 4 KB). Paper: 2-Step and Xor are not efficient; for more than"
echo "4 sources 2-Step suffers congestion at the node receiving all messages and grows faster than"
echo "s; Br_Lin, Br_xy_source and Br_xy_dim grow linearly and differ only slightly."
echo
pivot_md "$tmp/s2p-fig2.csv" s algo time_us 0.001 2
echo
echo "![Fig. 2](img/repro-s2p-fig2.svg)"
echo
read -r pk_s pk_t < <(peak "$tmp/s2p-fig2.csv" s 2-step)
read -r f2_ok f2_n < <(beaten_by_all "$tmp/s2p-fig2.csv" s "xor 2-step" "br-lin br-xy-source br-xy-dim")
t2_10=$(value "$tmp/s2p-fig2.csv" time_us algo=2-step s=10); t2_100=$(value "$tmp/s2p-fig2.csv" time_us algo=2-step s=100)
g2=$(ratio "$t2_100" "$t2_10")
r2min=$(for a in br-lin br-xy-source br-xy-dim; do r2 "$tmp/s2p-fig2.csv" "$a" 10 100; echo; done | sort -g | head -1)
slight=$(awk -F, 'NR > 1 && $2 ~ /^br-/ {k = $4; if (!(k in lo) || $6 + 0 < lo[k]) lo[k] = $6 + 0; if ($6 + 0 > hi[k]) hi[k] = $6 + 0}
  END {for (k in lo) if (hi[k] / lo[k] > m) m = hi[k] / lo[k]; printf "%.2f", m}' "$tmp/s2p-fig2.csv")
echo "Winner by s: $f2_win. 2-Step and Xor are both slower than the best of the three broadcasts at"
echo "$f2_ok of $f2_n s $(verdict_claim S2.poor "s-to-p Fig. 2" "2-Step and Xor are not efficient (slower than the best of Br_Lin, Br_xy_source, Br_xy_dim at every s)" "§5.1, Fig. 2" order "ok=$f2_ok;all=$f2_n" "ok == all" "$f2_ok of $f2_n s" "not explained")"
echo "(Xor pays its p − 1 sends even for one source: $(ms "$(value "$tmp/s2p-fig2.csv" time_us algo=xor s=1)") ms at s = 1 against"
echo "$(ms "$(value "$tmp/s2p-fig2.csv" time_us algo=br-xy-source s=1)") ms for Br_xy_source). From s = 10 to 100 (s grows 10×) 2-Step grows $g2×"
echo "$(verdict_claim S2.2step "s-to-p Fig. 2" "2-Step grows faster than s (from s = 10 to 100 by more than 10×)" "§5.1, Fig. 2" claim "g=$g2" "g > 10" "$g2× from s = 10 to 100; largest time at s = $pk_s" "$(sens_cause "$tmp/sens-s2p2.csv" 'x["g2"] "×"' 'x["g2"] > 10' "$nohit")") (its largest time is $pk_t ms, at s = $pk_s). The three broadcasts"
echo "grow linearly: the least R² of a straight line through each one's times for s = 10 … 100 is $r2min"
echo "$(verdict_claim S2.lin "s-to-p Fig. 2" "Br_Lin, Br_xy_source and Br_xy_dim grow linearly in s (R² ≥ 0.95 for s = 10 … 100)" "§5.1, Fig. 2" claim "r=$r2min" "r >= 0.95" "least R² $r2min" "not explained");"
echo "they differ by at most $slight× at any s $(verdict_claim S2.slight "s-to-p Fig. 2" "the three broadcasts differ only slightly (at most 10% at every s)" "§5.1, Fig. 2" claim "m=$slight" "m <= 1.10" "slowest over fastest at worst $slight" "$(sens_cause "$tmp/sens-s2p2.csv" 'x["slight"]' 'x["slight"] <= 1.10' "$nohit")")"
echo "(Br_xy_source and Br_xy_dim coincide on the equal distribution here: both pick the same dimension first)."
echo
sens_intro "[S2.2step] and [S2.slight]"
sens_md "$tmp/sens-s2p2.csv" "2-Step, time at s = 100 over s = 10 (paper: > 10)" "the three broadcasts, slowest over fastest at the worst s (paper: ≤ 1.10)"
echo
echo "[S2.2step]: $(sens_says "$tmp/sens-s2p2.csv" 'x["g2"] "×"' 'x["g2"] > 10' "2-Step's growth"). [S2.slight]:"
echo "$(sens_says "$tmp/sens-s2p2.csv" 'x["slight"]' 'x["slight"] <= 1.10' "the broadcasts' spread")."
echo
echo "### Fig. 3: time against message length (10×10, s = 30, right diagonal)"
echo
echo "Lost: the machine size (we use the 10×10 of Fig. 1's s = 30 example). Paper: 2-Step and Xor poor"
echo "at every L; Xor almost flat up to 1 KB; the other three change little up to a size that was"
echo "lost, then grow linearly."
echo
pivot_md "$tmp/s2p-fig3.csv" bytes algo time_us 0.001 2
echo
echo "![Fig. 3](img/repro-s2p-fig3.svg)"
echo
xf=$(flat_to "$tmp/s2p-fig3.csv" xor 1.1)
read -r f3_ok f3_n < <(beaten_by_all "$tmp/s2p-fig3.csv" bytes "xor 2-step" "br-lin br-xy-source br-xy-dim")
g3=$(ratio "$(value "$tmp/s2p-fig3.csv" time_us algo=br-xy-source bytes=16384)" "$(value "$tmp/s2p-fig3.csv" time_us algo=br-xy-source bytes=4096)")
echo "Winner by L: $f3_win. 2-Step and Xor are slower than the best broadcast at $f3_ok of $f3_n L"
echo "$(verdict_claim S3.poor "s-to-p Fig. 3" "2-Step and Xor poor at every L" "§5.1, Fig. 3" order "ok=$f3_ok;all=$f3_n" "ok == all" "$f3_ok of $f3_n L" "not explained")."
echo "Xor stays within 10% of its 32-byte time up to $xf B $(verdict_claim S3.xor "s-to-p Fig. 3" "Xor almost flat (within 10%) up to 1 KB" "§5.1, Fig. 3" claim "upto=$xf" "upto >= 1024" "within 10% up to $xf B" "not explained")"
echo "(its time is the sources' p − 1 sends of set-up cost each); Br_xy_source within 10% up to"
echo "$(flat_to "$tmp/s2p-fig3.csv" br-xy-source 1.1) B, and from 4 KB to 16 KB it grows $g3× (L grows 4×)"
echo "$(verdict_claim S3.lin "s-to-p Fig. 3" "Br_xy_source grows linearly at large L (4 KB → 16 KB within 10% of 4×)" "§5.1, Fig. 3" claim "g=$g3" "g >= 3.6 && g <= 4.4" "$g3× from 4 KB to 16 KB" "not explained")."
echo
echo "### Fig. 4: time against machine size (right diagonal)"
echo
echo "Lost: the number of sources (\"approximately ...\"; we use s = p/4) and L (4 KB). Square meshes"
echo "2×2 to 16×16. Paper: Xor is as good as any other algorithm for 4 to 16 processors."
echo
pivot_md "$tmp/s2p-fig4.csv" p algo time_us 0.001 2
echo
echo "![Fig. 4](img/repro-s2p-fig4.svg)"
echo
best4p() { awk -F, -v p="$1" 'NR > 1 && $7 == p && (m == "" || $6 < m) {m = $6} END {print m}' "$tmp/s2p-fig4.csv"; }
x4=$(ratio "$(value "$tmp/s2p-fig4.csv" time_us algo=xor p=4)" "$(best4p 4)")
x16=$(ratio "$(value "$tmp/s2p-fig4.csv" time_us algo=xor p=16)" "$(best4p 16)")
x256=$(ratio "$(value "$tmp/s2p-fig4.csv" time_us algo=xor p=256)" "$(best4p 256)")
echo "Winner by p: $f4_win. Xor against the best: ${x4}× at p = 4, ${x16}× at p = 16 and ${x256}× at p = 256"
echo "$(verdict_claim S4.xor "s-to-p Fig. 4" "Xor as good as any other algorithm (within 10% of the best) for 4 to 16 processors" "§5.1, Fig. 4" claim "a=$x4;b=$x16" "a <= 1.10 && b <= 1.10" "${x4}× the best at p = 4, ${x16}× at p = 16" "$(sens_cause "$tmp/sens-s2p4.csv" 'x["x4"] "× / " x["x16"] "×"' 'x["x4"] <= 1.10 && x["x16"] <= 1.10' "$nohit")")."
echo
sens_intro "[S4.xor]"
sens_md "$tmp/sens-s2p4.csv" "Xor over the best, p = 4" "Xor over the best, p = 16 (paper: both ≤ 1.10)"
echo
echo "[S4.xor]: $(sens_says "$tmp/sens-s2p4.csv" 'x["x4"] "× / " x["x16"] "×"' 'x["x4"] <= 1.10 && x["x16"] <= 1.10' "Xor at p = 4 and 16")."
echo
echo "### Fig. 5: the three broadcast algorithms on each distribution (10×10)"
echo
echo "Lost: s and L (we use s = 30, as in Fig. 1, and 4 KB); the surviving axis labels show row, dia,"
echo "blk and cro and ticks of 6-9 ms. Paper: Br_xy_source about equal on the first four"
echo "distributions, considerably slower on square block and cross; all three slower on block and"
echo "cross, where Br_Lin is best; Br_xy_dim much slower than Br_xy_source on the row distribution."
echo
pivot_md "$tmp/s2p-fig5.csv" dist algo time_us 0.001 2
echo
echo "![Fig. 5](img/repro-s2p-fig5.svg)"
echo
xs() { value "$tmp/s2p-fig5.csv" time_us algo=br-xy-source dist="$1"; }
xs() { value "$tmp/s2p-fig5.csv" time_us algo=br-xy-source dist="$1"; }
f5t() { value "$tmp/s2p-fig5.csv" time_us algo="$1" dist="$2"; }
# For each algorithm: are block and cross both slower than every other distribution?
read -r bc_ok bc_n < <(awk -F, 'NR > 1 {t[$2, $3] = $6 + 0; a[$2] = 1; d[$3] = 1}
  END {for (x in a) {n++; ok = 1; for (y in d) if (y != "block" && y != "cross" && !(t[x, "block"] > t[x, y] && t[x, "cross"] > t[x, y])) ok = 0; k += ok}; print k + 0, n}' "$tmp/s2p-fig5.csv")
dimrow=$(ratio "$(f5t br-xy-dim row)" "$(xs row)")
echo "Winner by distribution: $f5_win. Br_xy_source on row, col, equal and the diagonals:"
echo "$(awk -v a="$(xs row)" -v b="$(xs col)" -v c="$(xs equal)" -v d="$(xs diag-right)" -v e="$(xs diag-left)" 'BEGIN {
  lo = a; hi = a; n = split(b " " c " " d " " e, v, " "); for (i = 1; i <= n; i++) { if (v[i] < lo) lo = v[i]; if (v[i] > hi) hi = v[i] }
  printf "%.2f to %.2f ms", lo / 1000, hi / 1000 }'); on block $(ms "$(xs block)") ms and cross $(ms "$(xs cross)") ms. Block and cross are"
echo "slower than every other distribution for $bc_ok of the $bc_n algorithms"
echo "$(verdict_claim S5.bc "s-to-p Fig. 5" "all three algorithms slower on block and cross than on the other distributions" "§5.1, Fig. 5" order "ok=$bc_ok;all=$bc_n" "ok == all" "$bc_ok of $bc_n algorithms" "$(sens_cause "$tmp/sens-s2p5.csv" 'x["k"] " of " x["n"]' 'x["k"] == x["n"]' "$nohit; suspected: the square block's position, which §4 does not give (ours: the top-left corner; docs/s-to-p.md)")")."
echo "On block and cross Br_Lin takes $(ms "$(f5t br-lin block)") and $(ms "$(f5t br-lin cross)") ms against the best $(ms "$(awk -F, 'NR > 1 && $3 == "block" && (m == "" || $6 + 0 < m) {m = $6 + 0} END {print m}' "$tmp/s2p-fig5.csv")") and"
echo "$(ms "$(awk -F, 'NR > 1 && $3 == "cross" && (m == "" || $6 + 0 < m) {m = $6 + 0} END {print m}' "$tmp/s2p-fig5.csv")") ms $(verdict_claim S5.lin "s-to-p Fig. 5" "Br_Lin best on block and cross" "§5.1, Fig. 5" order "lb=$(f5t br-lin block);xb=$(f5t br-xy-source block);db=$(f5t br-xy-dim block);lc=$(f5t br-lin cross);xc=$(f5t br-xy-source cross);dc=$(f5t br-xy-dim cross)" "lb <= xb && lb <= db && lc <= xc && lc <= dc" "Br_Lin $(ms "$(f5t br-lin block)") / $(ms "$(f5t br-lin cross)") ms on block / cross" "$(sens_cause "$tmp/sens-s2p5.csv" 'x["lb"] "× / " x["lc"] "×"' 'x["linbest"] == "yes"' "$nohit; suspected: as above, the square block's position")")."
echo "Br_xy_dim on the row distribution takes ${dimrow}× Br_xy_source's time (it starts along the rows,"
echo "which are full of sources) $(verdict_claim S5.dim "s-to-p Fig. 5" "Br_xy_dim much slower (more than 10%) than Br_xy_source on the row distribution" "§5.1, Fig. 5" claim "r=$dimrow" "r > 1.10" "${dimrow}×" "not explained")."
echo
sens_intro "[S5.bc] and [S5.lin]"
sens_md "$tmp/sens-s2p5.csv" "algorithms slower on block and cross than elsewhere" "of (paper: all)" "Br_Lin over the best, block" "cross" "Br_Lin best on both (paper: yes)"
echo
echo "[S5.bc]: $(sens_says "$tmp/sens-s2p5.csv" 'x["k"] " of " x["n"]' 'x["k"] == x["n"]' "the block-and-cross ordering"). [S5.lin]:"
echo "$(sens_says "$tmp/sens-s2p5.csv" 'x["lb"] "× / " x["lc"] "×"' 'x["linbest"] == "yes"' "Br_Lin on block and cross"). The table does not"
echo "vary the distributions themselves: cross follows §4's definition (the union of a row and a column"
echo "distribution with about s/2 sources each; docs/s-to-p.md), and §4 gives the square block's size"
echo "(⌈√s⌉ × ⌈√s⌉) but not its position (ours: the top-left corner)."
echo
echo "### Fig. 6: total message size fixed at 80 KB (10×10, right diagonal)"
echo
echo "L = 80 KB / s. Paper: spreading the same data over more sources is faster; Br_xy_source takes"
echo "about 11.4 ms with 5 sources and 7.3 ms with 40 (ratio 1.56)."
echo
pivot_md "$tmp/s2p-fig6.csv" s algo time_us 0.001 2
echo
echo "![Fig. 6](img/repro-s2p-fig6.svg)"
echo
echo "| Br_xy_source, right diagonal | s = 5 (ms) | s = 40 (ms) | ratio |"
echo "|---|---:|---:|---:|"
echo "| paper (Fig. 6 text) | 11.4 | 7.3 | 1.56 |"
echo "| emulated, profiles/paragon.toml (OSF/1 AD) | $(ms "$f6_5") | $(ms "$f6_40") | $(ratio "$f6_5" "$f6_40") |"
for v in sunmos cpu; do
  a=$(value "$tmp/s2p-fig6-$v.csv" time_us s=5)
  b=$(value "$tmp/s2p-fig6-$v.csv" time_us s=40)
  [[ $v == sunmos ]] && label="emulated, SUNMOS (170 MB/s, 35 + 35 µs)" ||
    label="emulated, OSF/1 cost on the CPUs, links at $paragon_hw_link MB/s"
  echo "| $label | $(ms "$a") | $(ms "$b") | $(ratio "$a" "$b") |"
done
echo
read -r mono_ok mono_n < <(awk -F, 'NR > 1 && $2 == "br-xy-source" {s[++n] = $4 + 0; t[n] = $6 + 0} END {for (i = 2; i <= n; i++) {m++; if (t[i] < t[i - 1]) k++}; print k + 0, m + 0}' "$tmp/s2p-fig6.csv")
echo "With the OSF/1 profile: $(ms "$f6_5") ms at s = 5 $(verdict_value S6.t5 "s-to-p Fig. 6" "Br_xy_source, 5 sources of 16 KB, right diagonal (ms)" "about 11.4 ms (§5.1, Fig. 6)" 11.4 "$(ms "$f6_5")" "not explained"),"
echo "$(ms "$f6_40") ms at s = 40 $(verdict_value S6.t40 "s-to-p Fig. 6" "Br_xy_source, 40 sources of 2 KB, right diagonal (ms)" "about 7.3 ms (§5.1, Fig. 6)" 7.3 "$(ms "$f6_40")" "not explained"),"
echo "ratio $(ratio "$f6_5" "$f6_40") $(verdict_value S6.ratio "s-to-p Fig. 6" "Br_xy_source time at s = 5 over s = 40" "11.4 / 7.3 = 1.56" 1.56 "$(ratio "$f6_5" "$f6_40")" "not explained"). Winner by s: $f6_win."
echo "Br_xy_source gets faster from one s to the next at $mono_ok of the $mono_n steps"
echo "$(verdict_claim S6.mono "s-to-p Fig. 6" "more sources (the same 80 KB) are faster at every step of s" "§5.1, Fig. 6" order "ok=$mono_ok;all=$mono_n" "ok == all" "faster at $mono_ok of $mono_n steps of s" "$(sens_cause "$tmp/sens-s2p6.csv" 'x["k"] " of " x["n"]' 'x["k"] == x["n"]' "$nohit; suspected: how the diagonals of Dr(s) line up with the halving partners changes with s")")."
echo
sens_intro "[S6.mono]"
sens_md "$tmp/sens-s2p6.csv" "steps of s at which Br_xy_source gets faster" "of (paper: all)"
echo
echo "[S6.mono]: $(sens_says "$tmp/sens-s2p6.csv" 'x["k"] " of " x["n"]' 'x["k"] == x["n"]' "the monotone decrease")."
echo
echo "**Which Paragon.** The paper names neither the operating system nor a machine figure. We assume"
echo "OSF/1 AD: with NAS's SUNMOS figures the same broadcast would take the third row's times, far"
echo "below the paper's. The second choice is where OSF/1's $(prof paragon link_mb_per_s) MB/s is charged. A wormhole worm"
echo "advances at the pace of its slowest stage and holds its whole path until the tail passes, so"
echo "the profile charges every channel of the path at the NX rate (\`link_mb_per_s\`); charging the"
echo "same per-byte cost to the two CPUs instead, with the links at their $paragon_hw_link MB/s, gives the same"
echo "one-way time for a lone message but the fourth row's times here: the difference is the link"
echo "contention of the concurrent exchanges, which that reading makes nearly free."
echo
echo "### Fig. 7: Br_Lin with the machine's dimensions varying (equal distribution, L = 4 KB)"
echo
echo "Lost: p and the three source counts. The text's \"with the exception of size 4×30\" suggests"
echo "p = 120, so we use 2×60 … 10×12, and s = 10, 30, 60. Paper: for few sources the dimensions"
echo "hardly matter, for many they matter considerably, because the equal distribution falls into"
echo "columns on some shapes and onto diagonals on others."
echo
pivot_md "$tmp/s2p-fig7r.csv" mesh s time_us 0.001 2 "" "" nobest
echo
echo "![Fig. 7](img/repro-s2p-fig7.svg)"
echo
read -r sp10 w10 < <(spread "$tmp/s2p-fig7.csv" 10)
read -r sp30 w30 < <(spread "$tmp/s2p-fig7.csv" 30)
read -r sp60 w60 < <(spread "$tmp/s2p-fig7.csv" 60)
echo "Slowest over fastest shape: $sp10 with 10 sources, $sp30 with 30 (worst $w30) and $sp60 with 60"
echo "(worst $w60) $(verdict_claim S7.spread "s-to-p Fig. 7" "the machine's dimensions matter more with many sources than with few" "§5.1, Fig. 7" order "few=$sp10;many=$sp60" "many > few" "slowest / fastest shape: $sp10 (s = 10), $sp60 (s = 60)" "not explained")."
echo
echo "### Figs. 8 and 9: when repositioning pays (16×16)"
echo
echo "Percentage difference 100·(T(Br_xy_source) − T(Repos_xy_source)) / T(Br_xy_source):"
echo "positive means repositioning pays. Fig. 8: L = 6 KB, s = 16 … 192, including s that are not"
echo "multiples of 16 (for those E(s) does not fall into whole columns of the 16×16 mesh). Fig. 9:"
echo "s = 75, L varies."
echo
pivot_md "$tmp/s2p-fig8-pct.csv" s dist pct 1 1 "" "" nobest
echo
echo "![Fig. 8](img/repro-s2p-fig8.svg)"
echo
pivot_md "$tmp/s2p-fig9-pct.csv" bytes dist pct 1 1 "" "" nobest
echo
echo "![Fig. 9](img/repro-s2p-fig9.svg)"
echo
echo "| distribution | Fig. 8, emulated | paper (Fig. 8 text) | Fig. 9, L < 1 KB, emulated | paper (Fig. 9 text) |"
echo "|---|---|---|---|---|"
echo "| equal | $(pct_range "$tmp/s2p-fig8-pct.csv" equal) | pays | $(pct_range "$tmp/s2p-fig9-pct.csv" equal bytes 1024) | does not pay below 1 KB |"
echo "| cross | $(pct_range "$tmp/s2p-fig8-pct.csv" cross) | pays most | $(pct_range "$tmp/s2p-fig9-pct.csv" cross bytes 1024) | the only one that pays below 1 KB |"
echo "| band | $(pct_range "$tmp/s2p-fig8-pct.csv" band) | costs up to 6.5% more | $(pct_range "$tmp/s2p-fig9-pct.csv" band bytes 1024) | does not pay below 1 KB |"
echo "| block | $(pct_range "$tmp/s2p-fig8-pct.csv" block) | pays, significantly | $(pct_range "$tmp/s2p-fig9-pct.csv" block bytes 1024) | does not pay below 1 KB |"
echo
echo "In milliseconds (the paper's Fig. 8 text), the gain T(Br_xy_source) − T(Repos_xy_source):"
echo
echo "| | emulated (ms) | paper (ms) |"
echo "|---|---|---|"
echo "| cross, all s | $(col_range "$tmp/s2p-fig8-ms.csv" cross gain_ms) | gains 13 to 31 |"
echo "| band, s < 150 | $(col_range "$tmp/s2p-fig8-ms.csv" band gain_ms s 0 149) | −1 to −2 (costs 1-2 more) |"
echo "| band, s ≥ 150 | $(col_range "$tmp/s2p-fig8-ms.csv" band gain_ms s 150 256) | −7.5 |"
echo
read -r eq_k eq_n < <(pays "$tmp/s2p-fig8-pct.csv" equal)
read -r bl_k bl_n < <(pays "$tmp/s2p-fig8-pct.csv" block)
read -r cr_k cr_n < <(pays "$tmp/s2p-fig8-pct.csv" cross)
band_min=$(awk -F, 'NR > 1 && $1 == "band" && (m == "" || $3 < m) {m = $3} END {printf "%.1f", -m}' "$tmp/s2p-fig8-pct.csv")
cross_max=$(col_range "$tmp/s2p-fig8-ms.csv" cross gain_ms | sed 's/.* to //')
# Median gain per distribution (Fig. 8): is cross's the largest?
med() { awk -F, -v d="$1" 'NR > 1 && $1 == d {print $3 + 0}' "$tmp/s2p-fig8-pct.csv" | sort -g | awk '{v[++n] = $1} END {printf "%.1f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2}'; }
read -r ab_k ab_n < <(awk -F, 'NR > 1 && $2 > 128 {n++; if ($3 > 0) k++} END {print k + 0, n + 0}' "$tmp/s2p-fig8-pct.csv")
read -r be_k be_n < <(awk -F, 'NR > 1 && $2 <= 128 {n++; if ($3 > 0) k++} END {print k + 0, n + 0}' "$tmp/s2p-fig8-pct.csv")
# Fig. 9 below 1 KB: cross pays at every such L and no other distribution at any.
read -r c9_k c9_n < <(pays "$tmp/s2p-fig9-pct.csv" cross bytes 1024)
o9=$(for d in equal band block; do pays "$tmp/s2p-fig9-pct.csv" "$d" bytes 1024; done | awk '{k += $1} END {print k + 0}')
echo "Fig. 8 (§5.2): repositioning pays for every distribution but band; on equal it pays in $eq_k of $eq_n s"
echo "$(verdict_claim S8.equal "s-to-p Fig. 8" "repositioning pays on the equal distribution (at more than half of the s)" "§5.2, Fig. 8" claim "k=$eq_k;n=$eq_n" "2 * k > n" "pays at $eq_k of $eq_n s" "$(sens_cause "$tmp/sens-s2p8.csv" 'x["eqk"] " of " x["eqn"]' '2 * x["eqk"] > x["eqn"]' "$nohit; suspected: our E(s), the paper's own definition (§4), puts the sources on whole columns or a regular lattice, already a good input for Br_xy_source")")"
cross_min=$(col_range "$tmp/s2p-fig8-ms.csv" cross gain_ms | sed 's/ to .*//')
echo "— gains significantly on cross and square block: median gains equal $(med equal)%, cross $(med cross)%,"
echo "band $(med band)%, block $(med block)% $(verdict_claim S8.cross "s-to-p Fig. 8" "repositioning gains most on cross and square block (their median gains the two largest)" "§5.2" order "c=$(med cross);e=$(med equal);b=$(med band);k=$(med block)" "c > e && c > b && k > e && k > b" "median gains: cross $(med cross)%, block $(med block)%, equal $(med equal)%, band $(med band)%" "not explained")"
echo "(on cross between $cross_min and $cross_max ms: the smallest $(verdict_value S8.cross-min "s-to-p Fig. 8" "smallest gain by repositioning on cross (ms)" "13 ms (§5.2: between 13 and 31 ms)" 13 "$cross_min" "$(sens_value_cause "$tmp/sens-s2p8.csv" cmin 13 "$nohit")"),"
echo "the largest $(verdict_value S8.cross-ms "s-to-p Fig. 8" "largest gain by repositioning on cross (ms)" "31 ms (§5.2: between 13 and 31 ms)" 31 "$cross_max" "$(sens_value_cause "$tmp/sens-s2p8.csv" cmax 31 "$nohit")"));"
echo "costs up to 6.5% on band — at worst $band_min% $(verdict_value S8.band "s-to-p Fig. 8" "largest cost of repositioning on band (%)" "up to 6.5% (§5.2)" 6.5 "$band_min" "$(sens_value_cause "$tmp/sens-s2p8.csv" band 6.5 "$nohit")");"
echo "pays significantly on block — in $bl_k of $bl_n s $(verdict_claim S8.block "s-to-p Fig. 8" "repositioning pays on block (at more than half of the s)" "§5.2, Fig. 8" claim "k=$bl_k;n=$bl_n" "2 * k > n" "pays at $bl_k of $bl_n s" "not explained")."
echo "The paper's conclusion, repositioning pays unless s > p/2 (among other conditions): above"
echo "s = p/2 = 128 it pays in $ab_k of $ab_n cases, at s ≤ 128 in $be_k of $be_n"
echo "$(verdict_claim S8.half "s-to-p Figs. 8-9" "repositioning pays less often above s = p/2 than below" "§5.2" order "above=$ab_k;na=$ab_n;below=$be_k;nb=$be_n" "above / na < below / nb" "$ab_k of $ab_n above, $be_k of $be_n below" "not explained")."
echo "Fig. 9 (§5.2): below 1 KB only cross pays — cross pays at $c9_k of $c9_n such L, the other three"
echo "distributions at $o9 $(verdict_claim S9.below1k "s-to-p Fig. 9" "below 1 KB repositioning pays only on cross (at every such L)" "§5.2, Fig. 9" claim "ck=$c9_k;cn=$c9_n;other=$o9" "ck == cn && other == 0" "cross $c9_k of $c9_n, the others $o9 (distribution, L) cases" "$(sens_cause "$tmp/sens-s2p9.csv" 'x["ck"] " of " x["cn"] ", others " x["other"]' 'x["ck"] == x["cn"] && x["other"] == 0' "$nohit")")."
echo "The curves are jagged: whether a distribution's rows pair up in the first halving steps changes"
echo "from one s to the next, and the emulator shows every such effect without the measurement noise"
echo "(and averaging) that smoothed the paper's curves."
echo
echo "**Repositioning for Br_Lin** (Repos_Lin against Br_Lin, same configurations; the paper: \"similar"
echo "results hold for the repositioning algorithm using Br_Lin\"):"
echo
pivot_md "$tmp/s2p-fig8-lin.csv" s dist pct 1 1 "" "" nobest
echo
echo "![Repos_Lin](img/repro-s2p-fig8-lin.svg)"
echo
echo "| distribution | Repos_Lin over Br_Lin | Repos_xy_source over Br_xy_source |"
echo "|---|---|---|"
for d in equal cross band block; do
  echo "| $d | $(pct_range "$tmp/s2p-fig8-lin.csv" "$d") | $(pct_range "$tmp/s2p-fig8-pct.csv" "$d") |"
done
echo
read -r ln_k ln_n < <(awk -F, 'NR > 1 {n++; if ($3 > 0) k++} END {print k + 0, n}' "$tmp/s2p-fig8-lin.csv")
read -r xy_k xy_n < <(awk -F, 'NR > 1 {n++; if ($3 > 0) k++} END {print k + 0, n}' "$tmp/s2p-fig8-pct.csv")
echo "Repos_Lin pays in $ln_k of $ln_n of these configurations, Repos_xy_source in $xy_k of $xy_n"
echo "$(verdict_claim S8.lin "s-to-p Fig. 8" "repositioning for Br_Lin gives similar results (pays in as many configurations, within 10% of all of them)" "§5.2" claim "a=$ln_k;b=$xy_k;n=$ln_n" "a - b <= 0.10 * n && b - a <= 0.10 * n" "$ln_k against $xy_k of $ln_n" "$(sens_cause "$tmp/sens-s2p8.csv" 'x["lnk"] " against " x["xyk"]' 'x["lnk"] - x["xyk"] <= 0.10 * x["n"] && x["xyk"] - x["lnk"] <= 0.10 * x["n"]' "$nohit")")."
echo "Our Repos_Lin repositions onto the left diagonal (its ideal distribution, docs/s-to-p.md)."
echo
sens_intro "[S8.equal], [S8.cross-min], [S8.cross-ms], [S8.band] and [S8.lin]" "Fig. 8's runs are the dearest, so only two parameters are varied"
sens_md "$tmp/sens-s2p8.csv" "pays on equal" "of (paper: > half)" "cross gain, least (ms; paper 13)" "largest (paper 31)" "band's worst cost (%; paper 6.5)" "Repos_Lin pays" "Repos_xy_source pays" "of (paper: similar)"
echo
echo "[S8.equal]: $(sens_says "$tmp/sens-s2p8.csv" 'x["eqk"] " of " x["eqn"]' '2 * x["eqk"] > x["eqn"]' "the equal distribution's count")."
echo "[S8.cross-min]: $(sens_value_says "$tmp/sens-s2p8.csv" cmin 13 "the least gain on cross (ms)")."
echo "[S8.cross-ms]: $(sens_value_says "$tmp/sens-s2p8.csv" cmax 31 "the largest gain on cross (ms)")."
echo "[S8.band]: $(sens_value_says "$tmp/sens-s2p8.csv" band 6.5 "band's worst cost (%)")."
echo "[S8.lin]: $(sens_says "$tmp/sens-s2p8.csv" 'x["lnk"] " against " x["xyk"]' 'x["lnk"] - x["xyk"] <= 0.10 * x["n"] && x["xyk"] - x["lnk"] <= 0.10 * x["n"]' "Repos_Lin's count")."
echo
sens_intro "[S9.below1k]"
sens_md "$tmp/sens-s2p9.csv" "L < 1 KB at which repositioning pays on cross" "of (paper: all)" "(distribution, L) cases it pays on the others (paper: 0)"
echo
echo "[S9.below1k]: $(sens_says "$tmp/sens-s2p9.csv" 'x["ck"] " of " x["cn"] ", others " x["other"]' 'x["ck"] == x["cn"] && x["other"] == 0' "Fig. 9 below 1 KB")."
echo
part_best=$(awk -F, 'NR > 1 && (m == "" || $3 > m) {m = $3} END {printf "%+.1f", m}' "$tmp/s2p-fig8-part.csv")
part_pays=$(awk -F, 'NR > 1 && $3 > 0 {k++} NR > 1 {n++} END {printf "%d of %d", k, n}' "$tmp/s2p-fig8-part.csv")
partlin_best=$(awk -F, 'NR > 1 && (m == "" || $3 > m) {m = $3} END {printf "%+.1f", m}' "$tmp/s2p-fig8-partlin.csv")
partlin_pays=$(awk -F, 'NR > 1 && $3 > 0 {k++} NR > 1 {n++} END {printf "%d of %d", k, n}' "$tmp/s2p-fig8-partlin.csv")
# Partitioning against repositioning alone (the paper's comparison), both flavours, same configurations.
pct_csv "$tmp/s2p-fig8.csv" dist,s repos-xy-source part-xy-source > "$tmp/s2p-fig8-pvr.csv"
pct_csv "$tmp/s2p-fig8.csv" dist,s repos-lin part-lin > "$tmp/s2p-fig8-pvrlin.csv"
read -r pv_k pv_n < <(cat "$tmp/s2p-fig8-pvr.csv" <(tail -n +2 "$tmp/s2p-fig8-pvrlin.csv") | awk -F, 'NR > 1 {n++; if ($3 > 0) k++} END {print k + 0, n}')
echo "**Partitioning** (Fig. 8's configurations): Part_xy_source against Br_xy_source, best case"
echo "$part_best%, better in $part_pays cases; Part_Lin against Br_Lin, best case $partlin_best%, better in"
echo "$partlin_pays. The paper (§5.2): \"the partitioning approach hardly ever gives a better performance than"
echo "repositioning alone\", because the final exchange of long messages dominates. Against repositioning"
echo "alone (Repos_xy_source and Repos_Lin) partitioning is faster in $pv_k of $pv_n configurations"
echo "$(verdict_claim S8.part "s-to-p Fig. 8" "partitioning hardly ever (in at most 10% of the configurations) beats repositioning alone" "§5.2" claim "k=$pv_k;n=$pv_n" "k <= 0.10 * n" "faster in $pv_k of $pv_n" "not explained")."
echo
