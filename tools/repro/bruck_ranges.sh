# Bruck et al. Figs. 6-9: the legal α ranges of the λ-tree (the "Christmas tree") for λ = 2 and
# λ = 1.95, α at the triangle tops for λ = 1.95 up to n = 100 000 (Fig. 8), and the size of the α
# look-up table against n for λ = 1.293 (Fig. 9) (analytic, postbox model alpha-ranges). Sourced by tools/repro.sh: uses $pb, $tmp, $img; writes markdown to stdout.

"$pb" model alpha-ranges --lambda 2 --n-max 250 --svg "$img/repro-bruck-fig6.svg" > "$tmp/ranges-2.txt"
"$pb" model alpha-ranges --lambda 1.95 --n-max 250 --svg "$img/repro-bruck-fig7.svg" > "$tmp/ranges-195.txt"
# entries FILE: the number of look-up table entries in a text table ("alpha look-up table (Fig. 9): K entries").
entries() { awk '/look-up table/ {for (i = 1; i <= NF; i++) if ($i == "entries") print $(i - 1)}' "$1"; }
# table FILE: "K entries (α = A)" or "K entries" of the look-up table.
table() { awk '/look-up table/ {for (i = 1; i <= NF; i++) if ($i == "entries") k = $(i - 1); on = 1; next}
               on && $1 ~ /^[0-9]+$/ {a = $2; m++} END {printf "%d %s%s", k, (k == 1 ? "entry" : "entries"), (k == 1 ? " (α = " a ")" : "")}' "$1"; }
{
  echo "n_max,entries"
  for n in 10 100 1000 10000 100000; do
    "$pb" model alpha-ranges --lambda 1.293 --n-max "$n" > "$tmp/ranges-1293-$n.txt"
    echo "$n,$(entries "$tmp/ranges-1293-$n.txt")"
  done
} > "$tmp/fig9.csv"
# lut FILE: the look-up table's rows "n_upper alpha" (after the "look-up table" line).
lut() { awk '/look-up table/ {on = 1; next} on && $1 ~ /^[0-9]+$/ {print $1, $2}' "$1"; }
# steps FILE SERIES: the table as a step curve "n,SERIES,k" over n = 2 … its last n_upper: entry k
# serves n_upper(k-1) < n <= n_upper(k).
steps() { lut "$1" | awk -v s="$2" '{k++; lo = (k == 1) ? 2 : prev + 1; printf "%d,%s,%d\n%d,%s,%d\n", lo, s, k, $1, s, k; prev = $1}'; }

# Fig. 8: α at each triangle top for λ = 1.95 over n up to 100 000 (a data point per top, as in
# the paper).
"$pb" model alpha-ranges --lambda 1.95 --n-max 100000 > "$tmp/ranges-195-big.txt"
{
  echo "n,series,alpha"
  awk '$NF == "top" && $1 >= 2 {printf "%d,triangle tops,%s\n", $1, $5}' "$tmp/ranges-195-big.txt"
} > "$tmp/fig8.csv"
"$rp" plot --csv "$tmp/fig8.csv" --x n --y alpha --series series --log2x --points "triangle tops" \
  --title "Bruck Fig. 8: alpha at the triangle tops, lambda = 1.95" \
  --xlabel "log2 of the number of nodes n" --ylabel "alpha = n'/n" --out "$img/repro-bruck-fig8.svg"
f8_tops=$(awk -F, '$2 == "triangle tops"' "$tmp/fig8.csv" | wc -l)
f8_range() { awk -F, -v lo="$1" '$2 == "triangle tops" && $1 >= lo {if (m == "" || $3 < m) m = $3; if (M == "" || $3 > M) M = $3} END {printf "%.3f … %.3f", m, M}' "$tmp/fig8.csv"; }

# Fig. 9: the table's size against n for λ = 1.293, from the n = 100 000 table (its k-th entry is
# the last one a table for n up to its n_upper needs: the tables are built top by top, so a shorter
# table is a prefix of a longer one); the separate runs above are drawn as points and must agree.
{
  echo "n,series,entries"
  steps "$tmp/ranges-1293-100000.txt" "entries needed for n"
  awk -F, 'NR > 1 {printf "%s,separate runs,%s\n", $1, $2}' "$tmp/fig9.csv"
} > "$tmp/fig9-plot.csv"
awk -F, 'NR == FNR {if (FNR > 1) want[$1] = $2; next}
         FNR > 1 && $2 == "entries needed for n" {for (n in want) if ($1 + 0 >= n + 0 && !(n in got)) got[n] = $3}
         END {for (n in want) if (got[n] != want[n]) {printf "repro.sh: Fig. 9: the table for n up to %s has %s entries, the n = 100000 one says %s\n", n, want[n], got[n] > "/dev/stderr"; bad = 1} exit bad}' \
  "$tmp/fig9.csv" "$tmp/fig9-plot.csv" || exit 2
"$rp" plot --csv "$tmp/fig9-plot.csv" --x n --y entries --series series --log2x --points "separate runs" --ymin 0 \
  --title "Bruck Fig. 9: look-up table size against n, lambda = 1.293" \
  --xlabel "log2 of the number of nodes n" --ylabel "look-up table entries" --out "$img/repro-bruck-fig9.svg"

echo "## Bruck et al. Figs. 6-9: optimal α ranges and the look-up table"
echo
echo "From \`postbox model alpha-ranges\` (analytic: for each n the optimal sizes n_min … n_max of the"
echo "subset S' of Bruck §2.5, α = n'/n, and the look-up table of α values that the triangle tops"
echo "require; docs/explorer.md shows the same API). The look-up table's size answers the figures'"
echo "question, whether one α serves every n:"
echo
e6=$(entries "$tmp/ranges-2.txt"); e7=$(entries "$tmp/ranges-195.txt")
echo "| figure | λ | n | look-up table | paper (§2.5) | verdict |"
echo "|---|---|---|---|---|---|"
echo "| 6 | 2 | 2 … 250 | $(table "$tmp/ranges-2.txt") | a fixed α can be used for n up to 250 | $(verdict_claim B6 "Bruck Fig. 6" "λ = 2: one α serves every n up to 250" "§2.5" claim "entries=$e6" "entries == 1" "$e6 look-up table entries" "not explained") |"
echo "| 7 | 1.95 | 2 … 250 | $(table "$tmp/ranges-195.txt") | no fixed α for all n shown | $(verdict_claim B7 "Bruck Fig. 7" "λ = 1.95: no single α serves every n up to 250" "§2.5" claim "entries=$e7" "entries > 1" "$e7 look-up table entries" "not explained") |"
echo
echo "![Fig. 6](img/repro-bruck-fig6.svg) ![Fig. 7](img/repro-bruck-fig7.svg)"
echo
echo "Fig. 8: α = n'/n at each triangle top for λ = 1.95, n up to 100 000 ($f8_tops tops, a point each,"
echo "the paper's way of drawing it; the look-up table for these n has $(entries "$tmp/ranges-195-big.txt") entries). α at the tops spans"
echo "$(f8_range 2) over all n, $(f8_range 1000) from n = 1000 and $(f8_range 10000) from n = 10 000."
echo
echo "Fig. 9: entries of the α look-up table for λ = 1.293 (only the triangle tops constrain α), as a"
echo "curve over n from the n = 100 000 table, and from a separate run per row below (the points):"
echo
echo "| n up to | entries |"
echo "|---:|---:|"
awk -F, 'NR > 1 {printf "| %s | %s |\n", $1, $2}' "$tmp/fig9.csv"
echo
echo "![Fig. 8](img/repro-bruck-fig8.svg) ![Fig. 9](img/repro-bruck-fig9.svg)"
echo
echo "Paper: \"the size of the look-up table is very small in practice\" (its Fig. 9 plots the sizes;"
echo "the values did not survive the extraction); Fig. 8 shows the tops' α converging as n grows."
echo
