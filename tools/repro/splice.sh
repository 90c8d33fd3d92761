# Sourced by the scripts that generate one block of a doc (tools/repro/barrier.sh, noise.sh).
# splice_block SCRIPT PB MODE FILE BEGIN END: the block on stdin, printed (MODE ""), written
# between FILE's marker lines BEGIN and END (--write), or compared with what is there (--check:
# exit 1 and a diff when it differs).
splice_block() {
  local script=$1 pb=$2 mode=$3 file=$4 begin=$5 end=$6
  case "$mode" in
    "") cat ;;
    --write | --check)
      [[ -f $file ]] || { echo "$script: no file $file" >&2; exit 2; }
      grep -qxF "$begin" "$file" && grep -qxF "$end" "$file" || { echo "$script: $file lacks the markers" >&2; exit 2; }
      local new
      new=$(mktemp)
      cat > "$new.block"
      awk -v b="$begin" -v e="$end" -v blk="$new.block" '
        $0 == b { while ((getline l < blk) > 0) print l; skip = 1; next }
        $0 == e { skip = 0; next }
        !skip' "$file" > "$new"
      rm -f "$new.block"
      local differs=0
      if [[ $mode == --write ]]; then
        cp "$new" "$file"
      elif ! diff -u "$file" "$new"; then
        differs=1
      fi
      rm -f "$new"
      if ((differs)); then
        echo "$script: $file is out of date; run tools/repro/$script $pb --write $file" >&2
        exit 1
      fi
      ;;
    *) echo "$script: unknown mode '$mode' (--write or --check)" >&2; exit 2 ;;
  esac
}
