# Helpers for tools/repro.sh (sourced). CSV files have a header row; columns are named.

# pivot_md CSV XCOL SERIESCOL VALCOL SCALE DECIMALS [FILTERCOL FILTERVAL [nobest]]
# A markdown table: a row per value of XCOL, a column per value of SERIESCOL (first-appearance
# order), VALCOL·SCALE with DECIMALS decimals, and the series with the smallest value ("best")
# unless the ninth argument is "nobest".
pivot_md() {
  awk -F, -v xc="$2" -v sc="$3" -v vc="$4" -v k="$5" -v d="$6" -v fc="${7:-}" -v fv="${8:-}" -v nb="${9:-}" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    fc != "" && $(col[fc]) != fv { next }
    { x = $(col[xc]); s = $(col[sc]); v = $(col[vc]) * k
      if (!(x in xs)) { xs[x] = 1; xo[++nx] = x }
      if (!(s in ss)) { ss[s] = 1; so[++ns] = s }
      val[x, s] = v }
    END {
      h = "| " xc " |"; sep = "|---|"
      for (j = 1; j <= ns; j++) { h = h " " so[j] " |"; sep = sep "---:|" }
      if (nb == "") { h = h " best |"; sep = sep "---|" }
      print h; print sep
      for (i = 1; i <= nx; i++) {
        x = xo[i]; r = "| " x " |"; b = ""
        for (j = 1; j <= ns; j++) {
          s = so[j]
          if ((x, s) in val) { v = val[x, s]; r = r " " sprintf("%." d "f", v) " |"; if (b == "" || v < bv) { b = s; bv = v } }
          else r = r " |"
        }
        print r (nb == "" ? " " b " |" : "")
      }
    }' "$1"
}

# winners CSV XCOL SERIESCOL VALCOL [FILTERCOL FILTERVAL]: "A (XCOL 16–512), B (XCOL 1024–16384)":
# the smallest VALCOL's series for each XCOL, runs of the same winner merged.
winners() {
  awk -F, -v xc="$2" -v sc="$3" -v vc="$4" -v fc="${5:-}" -v fv="${6:-}" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    fc != "" && $(col[fc]) != fv { next }
    { x = $(col[xc]); v = $(col[vc]) + 0
      if (!(x in best) || v < bv[x]) { best[x] = $(col[sc]); bv[x] = v }
      if (!(x in seen)) { seen[x] = 1; xo[++nx] = x } }
    END {
      out = ""
      for (i = 1; i <= nx; i++) {
        w = best[xo[i]]; j = i
        while (j < nx && best[xo[j + 1]] == w) j++
        rng = (i == j) ? xo[i] : xo[i] "–" xo[j]
        out = out (out == "" ? "" : ", ") w " (" xc " " rng ")"
        i = j
      }
      print out
    }' "$1"
}

# ratio_csv CSV XCOL SERIESCOL VALCOL: CSV "XCOL,SERIESCOL,ratio", VALCOL over the smallest VALCOL
# at the same XCOL (1 = the best algorithm at that x).
ratio_csv() {
  awk -F, -v xc="$2" -v sc="$3" -v vc="$4" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { n++; x[n] = $(col[xc]); s[n] = $(col[sc]); v[n] = $(col[vc]) + 0
      if (!(x[n] in m) || v[n] < m[x[n]]) m[x[n]] = v[n] }
    END { print xc "," sc ",ratio"; for (i = 1; i <= n; i++) printf "%s,%s,%.4f\n", x[i], s[i], v[i] / m[x[i]] }' "$1"
}

# value CSV VALCOL COL=VAL [COL=VAL ...]: VALCOL of the first row matching every COL=VAL.
value() {
  local f=$1 vc=$2; shift 2
  awk -F, -v vc="$vc" -v conds="$*" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; n = split(conds, c, " "); next }
    { ok = 1; for (k = 1; k <= n; k++) { split(c[k], kv, "="); if ($(col[kv[1]]) != kv[2]) ok = 0 }
      if (ok) { print $(col[vc]); exit } }' "$f"
}

# pct_csv CSV KEYCOLS BASEALGO NEWALGO: CSV "KEYCOLS...,pct" with 100·(T_base − T_new)/T_base for
# rows that agree on KEYCOLS (comma-separated): positive = NEWALGO is faster.
pct_csv() {
  awk -F, -v keys="$2" -v base="$3" -v new="$4" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; nk = split(keys, kc, ","); next }
    { key = ""; for (k = 1; k <= nk; k++) key = key (k > 1 ? "," : "") $(col[kc[k]])
      if ($(col["algo"]) == base) { tb[key] = $(col["time_us"]); if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
      if ($(col["algo"]) == new) tn[key] = $(col["time_us"]) }
    END { print keys ",pct"; for (i = 1; i <= n; i++) { k = order[i]; if (k in tn) printf "%s,%.2f\n", k, 100 * (tb[k] - tn[k]) / tb[k] } }' "$1"
}

# csv_body FILE: the rows without the header (to concatenate CSVs with the same header).
csv_body() { tail -n +2 "$1"; }
