#!/usr/bin/env bash
# The recorder's prefetches are in its machine code. GCC counts no effect of a prefetch: a call of
# an inline function that only prefetches, left out of line, is a call of a pure function, and
# GCC removed it with the prefetch. So was the kept table's for a while, unnoticed, because
# nothing else changes when a prefetch is missing. Each place that starts a fetch must have a
# prefetch instruction in the function it was written in (or, where the build inlines that
# function into its one caller, in that caller).
#
# Usage: prefetch_test.sh OBJDUMP LIBRARY OUTPUT_FILE
set -euo pipefail
objdump=$1
library=$2
out=$3

"$objdump" -d -C --no-show-raw-insn "$library" > "$out"

# The functions (demangled names, without their parameters) that hold a prefetch instruction.
awk '/^[0-9a-f]+ <.*>:$/ { name = $0; sub(/^[0-9a-f]+ </, "", name);
                            gsub(/\(anonymous namespace\)/, "@", name); sub(/\(.*$/, "", name);
                            sub(/>:$/, "", name); gsub(/@/, "(anonymous namespace)", name); next }
     /prefetch/ { print name }' "$out" | sort -u > "$out.functions"

status=0
# expect WHAT NAME...: one of the NAMEs holds a prefetch.
expect() {
  local what=$1
  shift
  for name in "$@"; do
    if grep -qx -- "$name" "$out.functions"; then return 0; fi
  done
  echo "prefetch_test: no prefetch for $what: none in $*" >&2
  status=1
}

# The set of remembered walks of the allocation's leaf frame, fetched before the allocator runs.
expect "malloc's walk set" malloc
expect "calloc's walk set" calloc
expect "realloc's walk set" realloc
# The block-local table's slot (and, once the process has a second thread, the address's free
# epoch), fetched while the stack is walked.
expect "record_alloc's tables" lowalloc::trace::record_alloc
# The kept table's slots, eight entries ahead of the puts at a block's end.
expect "the kept table's puts" "lowalloc::trace::(anonymous namespace)::write_addresses" \
  lowalloc::trace::end_block

if [ "$status" -ne 0 ]; then
  echo "prefetch_test: functions that have one:" >&2
  sed 's/^/  /' "$out.functions" >&2
fi
exit "$status"
