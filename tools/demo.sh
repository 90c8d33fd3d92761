#!/usr/bin/env bash
# The demo behind `./run.sh demo`: each section runs the postbox command it shows, so every
# figure on screen is measured or computed right now, and a reader can rerun any line.
set -euo pipefail
PB=${1:?usage: demo.sh PATH/TO/postbox}

section() { printf '\n== %s\n' "$1"; }
show() { printf '$ postbox %s\n' "$*"; "$PB" "$@"; }

section "This machine's topology (hwloc) and where 8 ranks would be placed"
show topo --p 8

section "A mailbox round trip between two ranks"
show ping --p 2 --bytes 8 --iters 20000
