# Bruck et al. Figs. 6-9: the legal α ranges of the λ-tree (the "Christmas tree") for λ = 2 and
# λ = 1.95, and the size of the α look-up table against n for λ = 1.293 (analytic, postbox model
# alpha-ranges). Sourced by tools/repro.sh: uses $pb, $tmp, $img; writes markdown to stdout.

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
    "$pb" model alpha-ranges --lambda 1.293 --n-max "$n" > "$tmp/ranges-1293.txt"
    echo "$n,$(entries "$tmp/ranges-1293.txt")"
  done
} > "$tmp/fig9.csv"

echo "## Bruck et al. Figs. 6-9: optimal α ranges and the look-up table"
echo
echo "From \`postbox model alpha-ranges\` (analytic: for each n the optimal sizes n_min … n_max of the"
echo "subset S' of Bruck §2.5, α = n'/n, and the look-up table of α values that the triangle tops"
echo "require; docs/explorer.md shows the same API). The look-up table's size answers the figures'"
echo "question, whether one α serves every n:"
echo
echo "| figure | λ | n | look-up table | paper |"
echo "|---|---|---|---|---|"
echo "| 6 | 2 | 2 … 250 | $(table "$tmp/ranges-2.txt") | a fixed α can be used for n up to 250 |"
echo "| 7 | 1.95 | 2 … 250 | $(table "$tmp/ranges-195.txt") | no fixed α for all n shown |"
echo
echo "![Fig. 6](img/repro-bruck-fig6.svg) ![Fig. 7](img/repro-bruck-fig7.svg)"
echo
echo "Fig. 9: entries of the α look-up table for λ = 1.293 (only the triangle tops constrain α):"
echo
echo "| n up to | entries |"
echo "|---:|---:|"
awk -F, 'NR > 1 {printf "| %s | %s |\n", $1, $2}' "$tmp/fig9.csv"
echo
echo "Paper: \"the size of the look-up table is very small in practice\" (its Fig. 9 plots the sizes;"
echo "the values did not survive the extraction). Fig. 8 (the convergence of α for λ = 1.95 over"
echo "large n) is the same computation as Fig. 7 at a coarser grain and is not drawn separately."
echo
