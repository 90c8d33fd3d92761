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

# ---------------- The verdict ledger ----------------
# Every comparison with a paper goes through verdict_value or verdict_claim. Each computes its
# verdict from the numbers it is given, appends a row to $ledger (CSV, written next to the page as
# docs/reproduction-verdicts.csv) and prints the tag "[ID: verdict]" that the page's sentence
# carries. tools/repro/check_verdicts.py recomputes every verdict from the CSV's numbers (an
# independent implementation, in Python) and checks the page's tags and its verdict table against
# it (ctest docs.reproduction_verdicts).
#   within 10%        a value: |emulated / paper − 1| ≤ 0.10
#   ordering matches  an ordering the paper states holds on the emulated numbers
#   holds             a claim the paper states (not an ordering) holds on the emulated numbers
#   off               otherwise; the row then carries its cause: "published: <source>" or
#                     "not explained" (optionally followed by "; suspected: ..." — a hypothesis,
#                     not an explanation)
if [[ -n ${tmp:-} ]]; then
  ledger=${ledger:-$tmp/verdicts.csv}
  [[ -f $ledger ]] || echo "id,figure,claim,paper,paper_value,emulated,ratio,kind,data,test,verdict,cause" > "$ledger"
fi

# csvq FIELD...: the fields as one CSV line (every field quoted, quotes doubled).
csvq() {
  local out="" f
  for f in "$@"; do f=${f//\"/\"\"}; out+="${out:+,}\"$f\""; done
  printf '%s\n' "$out"
}

# verdict_value ID FIGURE CLAIM PAPER_QUOTE PAPER_NUM EMULATED_NUM CAUSE_IF_OFF
# The ratio is EMULATED_NUM / PAPER_NUM from the numbers exactly as given (so the checker, which
# reads the same strings, gets the same verdict).
verdict_value() {
  local id=$1 fig=$2 claim=$3 quote=$4 pv=$5 ev=$6 cause=$7 ratio verdict
  read -r ratio verdict < <(awk -v p="$pv" -v e="$ev" 'BEGIN {
    r = e / p; d = r - 1; if (d < 0) d = -d
    printf "%.3f %s\n", r, (d <= 0.10) ? "within" : "off" }')
  [[ $verdict == within ]] && verdict="within 10%" || verdict=off
  [[ $verdict == off ]] || cause=""
  csvq "$id" "$fig" "$claim" "$quote" "$pv" "$ev" "$ratio" value "paper=$pv;emulated=$ev" "|emulated/paper-1|<=0.10" "$verdict" "$cause" >> "$ledger"
  printf '[%s: %s]' "$id" "$verdict"
}

# verdict_claim ID FIGURE CLAIM PAPER_QUOTE KIND DATA TEST EMULATED_TEXT CAUSE_IF_OFF [RATIO]
# KIND is "order" or "claim"; DATA is "name=number;name=number..."; TEST a boolean expression
# over those names with < <= > >= == != && || ! ( ) + - * / and numbers (no chained
# comparisons). EMULATED_TEXT says in words what the numbers are; RATIO (optional) is shown.
verdict_claim() {
  local id=$1 fig=$2 claim=$3 quote=$4 kind=$5 data=$6 test=$7 emu=$8 cause=$9 ratio=${10:-} ok verdict
  ok=$(awk "BEGIN { ${data//;/; }; print (($test) ? 1 : 0) }")
  if [[ $ok == 1 ]]; then [[ $kind == order ]] && verdict="ordering matches" || verdict=holds; else verdict=off; fi
  [[ $verdict == off ]] || cause=""
  csvq "$id" "$fig" "$claim" "$quote" "" "$emu" "$ratio" "$kind" "$data" "$test" "$verdict" "$cause" >> "$ledger"
  printf '[%s: %s]' "$id" "$verdict"
}

# verdict_table: the ledger as the page's markdown table, then the counts sentence.
verdict_table() {
  python3 "$here/tools/repro/check_verdicts.py" --render "$ledger"
}

# prof NAME KEY: a number from profiles/NAME.toml, the value of "KEY = V" or of "KEY = { base_us = V ...}".
# Called inside $(...), where exit would end only the subshell: when the profile has no such line
# it ends the whole script ($$), so the page never states a value the profile lost.
prof() {
  local v
  v=$(awk -F' = ' -v k="$2" '$1 == k {v = substr($0, length($1) + 4); sub(/^[{] *base_us = /, "", v); sub(/[ ,}#].*/, "", v); print v + 0; exit}' "$here/profiles/$1.toml")
  [[ -n $v ]] || { echo "repro: profiles/$1.toml has no '$2 = ...' line" >&2; kill "$$"; exit 2; }
  echo "$v"
}

# ---------------- Sensitivity to unpublished parameters ----------------
# profile_with SRC OUT KEY=VALUE...: a copy of the profile SRC with each "KEY = ..." line's value
# replaced (for a host overhead, "KEY = { base_us = X" gets VALUE as X); exits 2 when SRC has no
# such line, so a renamed profile field cannot silently leave the copy unchanged.
profile_with() {
  local src=$1 out=$2 kv k v; shift 2
  cp "$src" "$out"
  for kv in "$@"; do
    k=${kv%%=*}; v=${kv#*=}
    case $k in
      *_overhead) grep -q "^$k = { base_us = [0-9.]*" "$out" || { echo "repro.sh: $src has no '$k = { base_us = ...' line" >&2; exit 2; }
                  sed -i "s|^\($k = { base_us = \)[0-9.]*|\1$v|" "$out" ;;
      *) grep -q "^$k = " "$out" || { echo "repro.sh: $src has no '$k = ...' line" >&2; exit 2; }
         sed -i "s|^$k = .*|$k = $v|" "$out" ;;
    esac
  done
}

# A sensitivity table is a CSV: "variant,published,<metric>,..." — the first row the profile as it
# is (published = profile), then one row per changed parameter (published = yes where the changed
# value is itself published: within a measured time's rounding, or another paper's stated value;
# no where no source gives it). Labels hold no commas.
# sens_md CSV [HEADER...]: the CSV as a markdown table (HEADER replaces the metric columns' names).
sens_md() {
  local f=$1; shift
  awk -F, -v hdr="$(IFS='|'; echo "$*")" 'NR == 1 {nh = split(hdr, H, "|"); h = "| " $1 " | " $2 " |"; s = "|---|---|"
      for (i = 3; i <= NF; i++) {h = h " " ((i - 2 <= nh && hdr != "") ? H[i - 2] : $i) " |"; s = s "---:|"}; print h; print s; next}
    {r = "| " $1 " | " $2 " |"; for (i = 3; i <= NF; i++) r = r " " $i " |"; print r}' "$f"
}
# sens_pass CSV SHOW TEST [PUBLISHED]: the rows after the profile's whose metrics pass TEST (an
# awk expression over x["metric"]) as "variant: SHOW" joined by "; ", SHOW an awk expression over
# the same x, e.g. "receive set-up ×2 (100 µs): 1.04"; only rows whose published column is
# PUBLISHED when given. Empty when none passes.
sens_pass() {
  awk -F, -v pub="${4:-}" 'NR == 1 {for (i = 1; i <= NF; i++) c[i] = $i; next}
    NR > 2 && (pub == "" || $2 == pub) {split("", x); for (i = 3; i <= NF; i++) x[c[i]] = $i
      if ('"$3"') out = out (out == "" ? "" : "; ") $1 ": " ('"$2"')}
    END {print out}' "$1"
}
# sens_cause CSV SHOW TEST OTHERWISE: a verdict's cause from its sensitivity table: "not explained;
# suspected: <the unpublished parameters that bring it to the paper's side> (sensitivity table: ...)"
# when some unpublished row passes TEST, else "not explained; OTHERWISE" (OTHERWISE says that no
# parameter in the table does, and any other hypothesis).
sens_cause() {
  local hit
  hit=$(sens_pass "$1" "$2" "$3" no)
  if [[ -n $hit ]]; then echo "not explained; suspected: an unpublished parameter (sensitivity table: $hit, on the paper's side)"
  else echo "not explained; $4"; fi
}
# sens_says CSV SHOW TEST WHAT: the sentence under a sensitivity table, computed from it: which rows
# bring WHAT to the paper's side, or that none does.
sens_says() {
  local hit pub
  hit=$(sens_pass "$1" "$2" "$3" no); pub=$(sens_pass "$1" "$2" "$3" yes)
  if [[ -z $hit && -z $pub ]]; then echo "no parameter in this table brings $4 to the paper's side"
  else
    [[ -n $hit ]] && printf '%s reaches the paper'"'"'s side with %s' "$4" "$hit"
    [[ -n $hit && -n $pub ]] && printf '; '
    [[ -n $pub ]] && printf '%s with %s (published values)' "$([[ -n $hit ]] && echo "and" || echo "$4 reaches the paper's side")" "$pub"
    echo
  fi
}
# sens_between CSV METRIC PAPER: the unpublished rows whose METRIC lies on the other side of the
# paper's value PAPER from the profile's (so a value of that parameter between the two would meet
# the paper), as "variant: value" joined by "; ". Empty when none.
sens_between() {
  awk -F, -v m="$2" -v p="$3" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == m) c = i; next}
    NR == 2 {b = $c; next} $2 == "no" && ($c - p) * (b - p) < 0 {out = out (out == "" ? "" : "; ") $1 ": " $c}
    END {print out}' "$1"
}
# sens_value_cause CSV METRIC PAPER OTHERWISE: sens_cause for a value verdict (within 10% of PAPER),
# adding the rows that bracket the paper's value when none reaches it.
sens_value_cause() {
  local test="(x[\"$2\"] / $3 - 1 <= 0.10 && 1 - x[\"$2\"] / $3 <= 0.10)" hit br base
  hit=$(sens_pass "$1" "x[\"$2\"]" "$test" no); br=$(sens_between "$1" "$2" "$3")
  base=$(awk -F, -v m="$2" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == m) c = i} NR == 2 {print $c}' "$1")
  if [[ -n $hit ]]; then echo "not explained; suspected: an unpublished parameter (sensitivity table: $hit, within 10% of the paper's $3)"
  elif [[ -n $br ]]; then echo "not explained; suspected: an unpublished parameter (sensitivity table: the paper's $3 lies between the profile's $base and $br)"
  else echo "not explained; $4"; fi
}
# sens_value_says CSV METRIC PAPER WHAT: sens_says for a value verdict, with the bracketing rows.
sens_value_says() {
  local test="(x[\"$2\"] / $3 - 1 <= 0.10 && 1 - x[\"$2\"] / $3 <= 0.10)" br base
  br=$(sens_between "$1" "$2" "$3")
  base=$(awk -F, -v m="$2" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == m) c = i} NR == 2 {print $c}' "$1")
  printf '%s' "$(sens_says "$1" "x[\"$2\"]" "$test" "$4")"
  [[ -z $br ]] || printf '; the paper'"'"'s %s lies between the profile'"'"'s %s and %s, so that parameter, between the two values, would meet it' "$3" "$base" "$br"
  echo
}
