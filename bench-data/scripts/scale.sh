#!/usr/bin/env bash
# The scale curve: one synthetic batch of games appended again and again, and after each append
# what a user feels: segments, `info`, an index-answered count and a few planned queries, each
# as a command (wall seconds, peak RSS; queries run twice, first and repeated); after each append `cqldb optimize` merges (its time and
# memory are a column; SCALE_OPTIMIZE=0 skips it). Not part of CI (10 M games take 16 GB and minutes).
#
# Usage: bash bench-data/scripts/scale.sh [GAMES_PER_BATCH] [BATCHES] [WORK_DIR]
#   defaults: 1000000 10 ./scale-work  (the 10 M-game database of the build-and-scale issue)
# Needs: cargo (builds cqldb and synth-pgn in release), /usr/bin/time.
set -euo pipefail
games="${1:-1000000}"
batches="${2:-10}"
work="${3:-./scale-work}"
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-${HOME:-/tmp}/.cache/cqldb-ci-target}"
# SCALE_BIN=DIR takes cqldb and synth-pgn from DIR (a build kept aside) instead of building.
if [ -n "${SCALE_BIN:-}" ]; then
  bin="$SCALE_BIN"
else
  cargo build --release --locked -q --bin cqldb
  cargo build --release --locked -q -p cqldb-bench-data --bin synth-pgn
  bin="$CARGO_TARGET_DIR/release"
fi
mkdir -p "$work"
pgn="$work/batch-$games.pgn"
[ -s "$pgn" ] || "$bin/synth-pgn" --games "$games" --seed 7 > "$pgn"
db="$work/db"
rm -rf "$db"

# One measured command: "seconds peak-MiB".
measure() {
  local t
  t="$(mktemp)"
  /usr/bin/time -f "%e %M" -o "$t" "$@" > /dev/null 2>&1 || { echo "failed: $*" >&2; rm -f "$t"; exit 1; }
  awk '{ printf "%s %.0f", $1, $2 / 1024 }' "$t"
  rm -f "$t"
}

queries=("stalemate" "mate" "Kg1 kg8 Rf1" "flipcolor {#A == 2 #P == 1 #a == 1}")
printf "%-10s %-8s %-14s %-14s %-14s" "games" "segments" "append s/MiB" "optimize s/MiB" "info s/MiB"
for q in "${queries[@]}"; do printf " %-22s" "${q:0:20}"; done
printf "\n"
for i in $(seq 1 "$batches"); do
  # The same file again: stored again only because it is asked for.
  append="$(measure "$bin/cqldb" index -q --allow-duplicates --db "$db" "$pgn")"
  # SCALE_OPTIMIZE=0 leaves the segments as the appends wrote them.
  optimize="-"
  if [ "${SCALE_OPTIMIZE:-1}" != 0 ]; then
    optimize="$(measure "$bin/cqldb" optimize -q --db "$db")"
  fi
  info="$(measure "$bin/cqldb" info --db "$db")"
  segments="$("$bin/cqldb" info --db "$db" | awk '/^segments/ { print $2 }')"
  total="$("$bin/cqldb" info --db "$db" | awk '/^games/ { print $2 }')"
  printf "%-10s %-8s %-14s %-14s %-14s" "$total" "$segments" "$append" "$optimize" "$info"
  # Each query twice: the first reads what it needs from disk (a written segment's pages are
  # dropped from the cache), the second is the repeated query: "first-s s MiB".
  for q in "${queries[@]}"; do
    first="$(measure "$bin/cqldb" cql --count --db "$db" -cql "$q" | cut -d' ' -f1)"
    printf " %-22s" "$first/$(measure "$bin/cqldb" cql --count --db "$db" -cql "$q")"
  done
  printf "\n"
done
