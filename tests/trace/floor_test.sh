#!/usr/bin/env bash
# The floor preload of scripts/recorder-floor.py (tests/bench/floor_preload.c) sees every
# allocation and free, in each of its modes: a floor that let calls through unseen would measure
# less than any recorder pays. Programs whose allocations are known (tests/trace/programs) run
# with K iterations and with 0, so their start-up cancels; the preload's counts must differ by
# exactly what the K iterations make. A forked child counts on its own (FILE.PID); a program
# started with exec runs without the preload.
#
# Usage: floor_test.sh PRELOAD PROGRAM_DIR WORK_DIR
set -euo pipefail
preload=$1
programs=$2
work=$3
mkdir -p "$work"
status=0

# counts MODE FILE CMD...: runs CMD under the preload in MODE; prints "ALLOCATIONS FREES" of FILE.
counts() {
  local mode=$1 file=$2
  shift 2
  rm -f "$file" "$file".*
  env LD_PRELOAD="$preload" LOWALLOC_FLOOR="$mode" LOWALLOC_FLOOR_COUNTS="$file" "$@" > /dev/null
  awk '/^allocations / { a = $2 } /^frees / { f = $2 } END { print a + 0, f + 0 }' "$file"
}

# expect WHAT GOT WANT
expect() {
  if [ "$2" != "$3" ]; then
    echo "floor_test: $1: counted $2 (allocations frees), expected $3" >&2
    status=1
  fi
}

# difference "A1 F1" "A0 F0": "A1-A0 F1-F0"
difference() {
  read -r a1 f1 <<< "$1"
  read -r a0 f0 <<< "$2"
  echo "$((a1 - a0)) $((f1 - f0))"
}

for mode in pass log zstd; do
  # 30,000 x (malloc, free): 720 KiB of records, so a full buffer is emptied.
  expect "$mode: malloc_loop" \
    "$(difference "$(counts "$mode" "$work/c" "$programs/malloc_loop" 30000)" \
                  "$(counts "$mode" "$work/c" "$programs/malloc_loop" 0)")" "30000 30000"
  # 4 threads, each 1,000 x (malloc, free) and 1,000 blocks freed at its end.
  expect "$mode: threads" \
    "$(difference "$(counts "$mode" "$work/c" "$programs/threads" 1000 4)" \
                  "$(counts "$mode" "$work/c" "$programs/threads" 0 4)")" "8000 8000"
  # K x (malloc, realloc, realloc, realloc, free): a realloc frees one block and makes another.
  expect "$mode: realloc_chain" \
    "$(difference "$(counts "$mode" "$work/c" "$programs/realloc_chain" 1000)" \
                  "$(counts "$mode" "$work/c" "$programs/realloc_chain" 0)")" "4000 4000"
done

# fork: the parent 1,000 x (malloc, free), the child 2,000 x, each in its own file.
counts pass "$work/f" "$programs/fork" 1000 > "$work/parent1000"
child1000=$(awk '/^allocations / { a = $2 } /^frees / { f = $2 } END { print a + 0, f + 0 }' \
            "$work"/f.[0-9]*)
counts pass "$work/f" "$programs/fork" 0 > "$work/parent0"
child0=$(awk '/^allocations / { a = $2 } /^frees / { f = $2 } END { print a + 0, f + 0 }' \
         "$work"/f.[0-9]*)
expect "fork: the parent" "$(difference "$(cat "$work/parent1000")" "$(cat "$work/parent0")")" \
  "1000 1000"
expect "fork: the child" "$(difference "$child1000" "$child0")" "2000 2000"

# exec: the program exec'd runs without the preload, and the image before the exec writes
# nothing (its exit never comes): no file.
rm -f "$work/e" "$work/e".*
env LD_PRELOAD="$preload" LOWALLOC_FLOOR_COUNTS="$work/e" "$programs/exec" 10 \
  "$programs/malloc_loop" 10 > /dev/null
if ls "$work"/e* > /dev/null 2>&1; then
  echo "floor_test: exec: the program exec'd ran with the preload ($(ls "$work"/e*))" >&2
  status=1
fi

exit $status
