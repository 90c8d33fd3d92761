# Bruck et al. §3, Figs. 15-16: the global combine for a non-integer λ, delay-receive (each receive
# idles to ⌈λ⌉ steps) against delay-send (each send idles to λ/⌊λ⌋ steps). The emulated times of
# the plans (postbox sweep over p on the postal machine) beside T'_λ(n) and T''_λ(n), computed here
# from the paper's recursions, not from the plans. Sourced by tools/repro.sh after bruck_tables.sh
# ($tmp/breakeven.rows): uses $pb, $rp, $tmp, $img and lib.sh; writes markdown to stdout.

combine_lambdas="2.5 1.8"  # Figs. 15-16's λ; the Delta's 1.8 at 512 B, above the break-even 1.44 of Table 2
combine_nmax=64
{
  echo "lambda,n,series,time"
  for lam in $combine_lambdas; do
    for a in delay-recv delay-send; do
      "$pb" sweep --machine "postal:$lam" --op allreduce --algo "postal-$a" --bytes 8 --param p=2:$combine_nmax:1 --csv |
        awk -F, -v l="$lam" -v a="$a" 'NR > 1 {printf "%s,%s,emulated %s,%s\n", l, $1, a, $2 + 0}'
    done
    # T'(n): the least integer t with N_⌈λ⌉(t) >= n; T''(n) = (λ/⌊λ⌋)·T_⌊λ⌋(n) (Bruck §3.2-3.3).
    awk -v l="$lam" -v nmax=$combine_nmax 'function ceil(x) { return (x == int(x)) ? x : int(x) + 1 }
      function inv(k, n,   t, N) { for (t = 0; ; t++) { N[t] = (t < k) ? 1 : N[t - 1] + N[t - k]; if (N[t] >= n) return t } }
      BEGIN { c = ceil(l); f = int(l)
              for (n = 2; n <= nmax; n++) { printf "%s,%d,T1 delay-recv,%g\n", l, n, inv(c, n)
                                            printf "%s,%d,T2 delay-send,%g\n", l, n, l / f * inv(f, n) } }'
  done
} > "$tmp/combine.csv"
for lam in $combine_lambdas; do
  awk -F, -v l="$lam" 'NR == 1 || $1 == l' "$tmp/combine.csv" > "$tmp/combine-$lam.csv"
  "$rp" plot --csv "$tmp/combine-$lam.csv" --x n --y time --series series --points "T1 delay-recv,T2 delay-send" \
    --title "Bruck Figs. 15-16: global combine, postal lambda = $lam" --xlabel "n (ranks)" \
    --ylabel "time (steps): emulated plans; points T' and T'' from the recursions" --out "$img/repro-bruck-combine-$lam.svg"
done
# agree LAMBDA APPROACH: "k of K" n where the emulated time equals the recursion's.
agree() {
  awk -F, -v l="$1" -v a="$2" '$1 == l && $3 == "emulated " a { e[$2] = $4 + 0 }
    $1 == l && (($3 == "T1 delay-recv" && a == "delay-recv") || ($3 == "T2 delay-send" && a == "delay-send")) { f[$2] = $4 + 0 }
    END { for (n in f) { K++; if ((n in e) && e[n] - f[n] < 1e-9 && f[n] - e[n] < 1e-9) k++ } printf "%d of %d", k, K }' "$tmp/combine.csv"
}
# wins LAMBDA: how many n each approach is strictly faster at (emulated).
wins() {
  awk -F, -v l="$1" '$1 == l && $3 == "emulated delay-recv" { r[$2] = $4 + 0 } $1 == l && $3 == "emulated delay-send" { s[$2] = $4 + 0 }
    END { for (n in r) { if (s[n] < r[n] - 1e-9) ds++; else if (r[n] < s[n] - 1e-9) dr++; else eq++ }
          printf "delay-send faster for %d, delay-receive for %d, equal for %d", ds, dr, eq }' "$tmp/combine.csv"
}
at() { awk -F, -v l="$1" -v n="$2" -v s="$3" '$1 == l && $2 == n && $3 == s {print $4}' "$tmp/combine.csv"; }

echo "## Bruck et al. Figs. 15-16: global combine with delay-receive and delay-send"
echo
echo "The postal global combine (\`--op allreduce --algo postal-delay-recv | postal-delay-send\`) on"
echo "\`postal:λ\`, n = 2 … $combine_nmax. The paper's Figs. 15-16 draw the two schedules for λ = 2.5;"
echo "T'_λ(n) and T''_λ(n) (§3.2-3.3) are computed here from the paper's recursions,"
echo "N'_λ(t) = N'_λ(t−1) + N'_λ(t−⌈λ⌉) and T''_λ(n) = (λ/⌊λ⌋)·T_⌊λ⌋(n), independently of the plans."
echo
echo "| λ | n | emulated delay-receive | T'_λ(n) | emulated delay-send | T''_λ(n) |"
echo "|---|---|---|---|---|---|"
for lam in $combine_lambdas; do
  for n in 2 8 16 32 64; do
    echo "| $lam | $n | $(at "$lam" $n "emulated delay-recv") | $(at "$lam" $n "T1 delay-recv") | $(at "$lam" $n "emulated delay-send") | $(at "$lam" $n "T2 delay-send") |"
  done
done
echo
for lam in $combine_lambdas; do
  read -r k1 _ K1 < <(agree "$lam" delay-recv; echo); read -r k2 _ K2 < <(agree "$lam" delay-send; echo)
  echo "λ = $lam: the emulated delay-receive time equals T'_λ(n) for $k1 of $K1 n"
  echo "$(verdict_claim "B15.recv-$lam" "Bruck Fig. 15" "delay-receive combine time equals T'_λ(n), λ = $lam, n = 2 … $combine_nmax" "§3.2 recursion" claim "equal=$k1;all=$K1" "equal == all" "$k1 of $K1 n" "not explained"),"
  echo "the delay-send time equals T''_λ(n) for $k2 of $K2 $(verdict_claim "B16.send-$lam" "Bruck Fig. 16" "delay-send combine time equals T''_λ(n), λ = $lam, n = 2 … $combine_nmax" "§3.3" claim "equal=$k2;all=$K2" "equal == all" "$k2 of $K2 n" "not explained");"
  echo "$(wins "$lam")."
done
for lam in $combine_lambdas; do
  # Table 2's break-even for ⌊λ⌋ ($tmp/breakeven.rows from bruck_tables.sh: floor,gamma,break_even).
  be=$(awk -F, -v f="${lam%%.*}" '$1 == f {printf "%.3f", $3}' "$tmp/breakeven.rows")
  side=$(awk -v l="$lam" -v b="$be" 'BEGIN {print (l < b) ? "below" : "above"}')
  want=$([[ $side == below ]] && echo delay-send || echo delay-receive)
  # The emulated times of the two approaches at the largest n.
  tr_=$(at "$lam" $combine_nmax "emulated delay-recv"); ts_=$(at "$lam" $combine_nmax "emulated delay-send")
  if [[ $want == delay-send ]]; then t_want=$ts_; t_other=$tr_; else t_want=$tr_; t_other=$ts_; fi
  echo "λ = $lam is $side Table 2's break-even $be for ⌊λ⌋ = ${lam%%.*}, so $want should win asymptotically;"
  echo "at n = $combine_nmax it takes $t_want against $t_other $(verdict_claim "B17.win-$lam" "Bruck Table 2" "λ = $lam: $want is faster at the largest n" "§3.3 break-even" order "want=$t_want;other=$t_other" "want < other" "$want $t_want, the other $t_other (n = $combine_nmax)" "not explained")."
done
echo "(At small n the whole steps of T_⌊λ⌋ and T' decide, so the loser can tie or win at some n.)"
echo
echo "![λ = 2.5](img/repro-bruck-combine-2.5.svg) ![λ = 1.8](img/repro-bruck-combine-1.8.svg)"
echo
