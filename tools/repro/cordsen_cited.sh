# Cordsen et al. §1: the barrier times it cites for other machines (KSR, Alewife, T3D), against
# the send/receive model. Sourced by tools/repro.sh after cordsen.sh: uses $pb, $tmp and lib.sh;
# writes markdown to stdout.
#
# The KSR figures (p, µs), which the paper quotes from its reference [8]: a four-ary tree barrier
# and a centralized one. No s or r is published for the KSR, so s + r is fitted to the centralized
# times (the only fit on this page that uses the figures it is then compared with; it is shown as
# a fit, and the tree is judged with it).
ksr_ps=(10 16 32)
declare -A ksr_tree=([10]=223 [16]=338 [32]=635) ksr_central=([10]=254 [16]=451 [32]=920)
# bar S R ALGO: "p time" for p = 10 … 32 of the emulated barrier ALGO on the s/r model.
bar() { "$pb" sweep --machine "sr:$1:$2" --op barrier --algo "$3" --param p=10:32:1 --csv | awk -F, 'NR > 1 {print $1, $2 + 0}'; }
at() { awk -v p="$2" '$1 == p {print $2}' "$1"; }
bar 0.5 0.5 central > "$tmp/ksr-central-unit.txt"
# Least squares of t(p) = σ·c(p), c the centralized barrier's time at s + r = 1.
ksr_sigma=$(for p in "${ksr_ps[@]}"; do echo "$(at "$tmp/ksr-central-unit.txt" "$p") ${ksr_central[$p]}"; done |
  awk '{n += $1 * $2; d += $1 * $1} END {printf "%.1f", n / d}')
half_sigma=$(awk -v s="$ksr_sigma" 'BEGIN {printf "%g", s / 2}')
bar "$half_sigma" "$half_sigma" central > "$tmp/ksr-central.txt"
# The tree: mcs is the emulator's four-ary combining arrival (its wake-up is binary); the split of
# s + r into s and r is not published, so three splits are shown.
ksr_splits=(0.25 0.5 0.75)
for f in "${ksr_splits[@]}"; do
  read -r s r < <(awk -v t="$ksr_sigma" -v f="$f" 'BEGIN {printf "%g %g\n", t * f, t * (1 - f)}')
  bar "$s" "$r" mcs > "$tmp/ksr-mcs-$f.txt"
done
# The centralized fit's worst deviation, and the tree at p = 32 (split 0.5) and over the splits.
ksr_fit_worst=$(for p in "${ksr_ps[@]}"; do echo "$(at "$tmp/ksr-central.txt" "$p") ${ksr_central[$p]}"; done |
  awk '{d = $1 / $2 - 1; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.3f", m}')
# The centralized times per process, and whether they grow or fall with p.
ksr_pp=$(for p in "${ksr_ps[@]}"; do echo "$p ${ksr_central[$p]}"; done | awk '{printf "%s%.1f", (NR > 1 ? ", " : ""), $2 / $1}')
ksr_pp_trend=$(for p in "${ksr_ps[@]}"; do echo "$p ${ksr_central[$p]}"; done |
  awk 'NR == 1 {a = $2 / $1} {b = $2 / $1} END {print (b > a) ? "grows" : "falls"}')
ksr_t32=$(at "$tmp/ksr-mcs-0.5.txt" 32)
ksr_t32_range=$(for f in "${ksr_splits[@]}"; do at "$tmp/ksr-mcs-$f.txt" 32; done | sort -g | awk 'NR == 1 {a = $1} {b = $1} END {print a " to " b}')
ksr_t32_hit=$(for f in "${ksr_splits[@]}"; do at "$tmp/ksr-mcs-$f.txt" 32; done | awk '{d = $1 / 635 - 1; if (d < 0) d = -d; if (d <= 0.10) k++} END {print k + 0}')
ksr_growth_paper=$(awk 'BEGIN {printf "%.2f", 635 / 223}')
ksr_growth_emu=$(awk -v a="$(at "$tmp/ksr-mcs-0.5.txt" 10)" -v b="$ksr_t32" 'BEGIN {printf "%.2f", b / a}')
ksr_order_ok=$(for p in "${ksr_ps[@]}"; do echo "$(at "$tmp/ksr-mcs-0.5.txt" "$p") $(at "$tmp/ksr-central.txt" "$p")"; done |
  awk '$1 < $2 {k++} END {print k + 0}')

echo "## Cordsen et al. §1: the barrier times it cites for the KSR, Alewife and T3D"
echo
echo "§1 quotes barrier times on three other machines. **KSR** (from its reference [8]), (p, µs): a"
echo "four-ary tree (10, 223), (16, 338), (32, 635); a centralized barrier (10, 254), (16, 451), (32, 920)."
echo "No s or r is published for the KSR. The emulator's centralized barrier on the s/r model takes"
echo "p·(s + r), so s + r is fitted to the three centralized times (least squares): **s + r = $ksr_sigma µs**"
echo "(fitted to §1's centralized KSR times; s = r = $half_sigma µs below), off by at most"
echo "$(awk -v w="$ksr_fit_worst" 'BEGIN {printf "%.1f", w * 100}')% at those three p $(verdict_claim KSR.central "Cordsen §1 (KSR)" "the centralized barrier's times fit t = p·(s + r) with one s + r (each within 10%)" "§1, citing its [8]" claim "worst=$ksr_fit_worst" "worst <= 0.10" "s + r = $ksr_sigma µs fitted; worst deviation $ksr_fit_worst" "not explained; suspected: the measured time per process $ksr_pp_trend with p ($ksr_pp µs at p = 10, 16 and 32), where p·(s + r) keeps it constant")."
echo "The tree is judged with that s + r: the emulator's nearest barrier is \`mcs\` (a four-ary combining"
echo "arrival, as in the cited tree; its wake-up is binary), and since the split of s + r is not"
echo "published, three splits are shown (µs):"
echo
echo "| p | KSR four-ary tree | mcs, s = ¼ (s + r) | mcs, s = ½ (s + r) | mcs, s = ¾ (s + r) | KSR centralized | central, fitted |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for p in "${ksr_ps[@]}"; do
  echo "| $p | ${ksr_tree[$p]} | $(at "$tmp/ksr-mcs-0.25.txt" "$p") | $(at "$tmp/ksr-mcs-0.5.txt" "$p") | $(at "$tmp/ksr-mcs-0.75.txt" "$p") | ${ksr_central[$p]} | $(at "$tmp/ksr-central.txt" "$p") |"
done
echo
echo "The tree beats the centralized barrier at $ksr_order_ok of ${#ksr_ps[@]} p, as on the KSR $(verdict_claim KSR.order "Cordsen §1 (KSR)" "the four-ary tree barrier is faster than the centralized one at p = 10, 16 and 32" "§1, citing its [8]" order "k=$ksr_order_ok;n=${#ksr_ps[@]}" "k == n" "tree faster at $ksr_order_ok of ${#ksr_ps[@]} p (split ½)" "not explained")."
echo "At p = 32 the tree takes $ksr_t32 µs (split ½; $ksr_t32_range over the three splits) against the KSR's 635"
echo "$(verdict_value KSR.tree32 "Cordsen §1 (KSR)" "four-ary tree barrier at p = 32 with the fitted s + r (µs)" "635 µs (§1, citing its [8])" 635 "$ksr_t32" "not explained; $ksr_t32_hit of ${#ksr_splits[@]} splits of the fitted s + r bring it within 10%; suspected: the KSR's tree time grows $ksr_growth_paper× from p = 10 to 32, almost as p does, where a tree's depth grows as log p (emulated: $ksr_growth_emu×), so most of the KSR's cost is not the s/r model's")."
echo
echo "**Alewife and T3D** are not emulated. Alewife's 64-process barrier (50 µs with a binary tree over"
echo "shared memory, 20 µs with a 2-level eight-ary tree over message passing) gains, the paper says,"
echo "\"through the hardware assisted dedicated communication support\", and the T3D's (never slower than"
echo "4 µs on 64 nodes) is its synchronization network: the s/r model has neither, and the paper gives"
echo "no s or r for these machines, so an emulated time would test a guess, not the model."
echo
