#!/bin/sh
# The loop of `make demo` on examples/wordfreq: trace a program, read the advice, apply it, trace
# and time again.
#   1. build the `lowalloc` command and wordfreq with the standard types (examples/wordfreq.hpp),
#      generate the text, `lowalloc run` wordfreq on it, show the report's top sites and write
#      the HTML report (build/demo/demo/before.html);
#   2. `lowalloc advise` the trace;
#   3. wordfreq_fixed: the same program with the aliases switched to the advised types and sizes
#      (-DWORDFREQ_FIXED; the test wordfreq_advice keeps the two in step);
#   4. `lowalloc run` it, `lowalloc diff` the two traces, time both builds untraced;
#   5. a table: tokens per second and heap allocations, before and after.
# Usage: scripts/demo.sh [RUNS]   (RUNS untraced runs of each build, alternating, on one CPU
# when taskset is there; default 9)
# Run from anywhere; it builds with the `demo` preset (the release build without the tests and
# benchmarks, so that only `scripts/install-deps.sh demo` is needed) into build/demo and writes
# its files to build/demo/demo/. POSIX sh and awk only.
set -eu

runs=${1:-9}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=build/demo
work=$build/demo
lowalloc=$build/bin/lowalloc
mkdir -p "$work"

# Prints a step's heading.
step() {
  printf '\n==== %s\n\n' "$*"
}

# Runs "$@" with the source root cut from the file names it prints.
short() {
  "$@" | sed "s|$root/||g"
}

# The value of KEY=VALUE in wordfreq's last line, in the output file $1.
field() {
  awk -v key="$2" '/^wordfreq: / { for (i = 2; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == key) v = kv[2] } } END { print v }' "$1"
}

# lowalloc run -o TRACE -- PROGRAM: its messages go to TRACE.log, shown if it fails.
traced() {
  trace=$1
  shift
  if ! "$lowalloc" run -o "$trace" -- "$@" 2>"$trace.log"; then
    cat "$trace.log" >&2
    exit 1
  fi
}

# The allocations of trace $1, from the summary of `lowalloc report`.
allocations() {
  "$lowalloc" report --top 0 "$1" | awk '$1 == "allocations" { gsub(",", "", $2); print $2; exit }'
}

step "building lowalloc and examples/wordfreq ($build)"
start=$(date +%s)
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
if ! { cmake --preset demo && cmake --build --preset demo -j "$jobs" --target lowalloc_cli wordfreq wordfreq_fixed wordfreq_text; } >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log"
  echo "demo: the build failed; the whole log is in $work/build.log" >&2
  exit 1
fi
echo "built in $(($(date +%s) - start)) s (log: $work/build.log)"
"$build/examples/wordfreq_text" "$work/text.txt"

step "1. wordfreq with the standard types, under lowalloc run"
grep -n '^using' examples/wordfreq.hpp | sed -n '1,2p;$p' | sed 's|^|  examples/wordfreq.hpp:|'
echo
traced "$work/before.trace" "$build/examples/wordfreq" "$work/text.txt" 5
echo
short "$lowalloc" report --top 3 "$work/before.trace"
"$lowalloc" report --format html -o "$work/before.html" "$work/before.trace"
echo
echo "All of it as one page (flame graph, live bytes over time, sizes, sites with advice):"
echo "  $work/before.html (open it in a browser)"

step "2. lowalloc advise"
short "$lowalloc" advise --top 3 "$work/before.trace"

step "3. the advised types: wordfreq_fixed (-DWORDFREQ_FIXED)"
grep -n '^using' examples/wordfreq.hpp | sed -n '3,4p;$p' | sed 's|^|  examples/wordfreq.hpp:|'

step "4. wordfreq_fixed under lowalloc run, and lowalloc diff"
traced "$work/after.trace" "$build/examples/wordfreq_fixed" "$work/text.txt" 5
echo
short "$lowalloc" diff "$work/before.trace" "$work/after.trace" --top 5

# Both builds on the same CPU: a run that moves between CPUs, or shares one, is the noise.
pin=
if command -v taskset >/dev/null 2>&1 && taskset -c 0 true 2>/dev/null; then
  pin="taskset -c 0"
fi
step "timing both builds untraced: $runs runs each, alternating${pin:+, on CPU 0}"
: >"$work/times"
i=1
while [ "$i" -le "$runs" ]; do
  line="  run $i:"
  for variant in wordfreq wordfreq_fixed; do
    $pin "$build/examples/$variant" "$work/text.txt" >"$work/$variant.out"
    seconds=$(field "$work/$variant.out" seconds)
    echo "$variant $(field "$work/$variant.out" tokens) $seconds" >>"$work/times"
    line="$line  $variant $seconds s"
  done
  echo "$line"
  i=$((i + 1))
done

# tokens/s of one build: "median min max", in millions.
rates() {
  awk -v v="$1" '$1 == v { printf "%.6f\n", $2 / $3 / 1e6 }' "$work/times" | sort -n |
    awk '{ r[NR] = $1 } END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
                              print m, r[1], r[NR] }'
}

step "5. before and after"
fixed_types="$(sed -n 's/^using token = lowalloc::\(.*\);/\1/p' examples/wordfreq.hpp),\
 $(sed -n 's/^using token_list = lowalloc::\(.*\);/\1/p' examples/wordfreq.hpp)"
{
  echo "std::string, std::vector|$(rates wordfreq)|$(allocations "$work/before.trace")"
  echo "$fixed_types|$(rates wordfreq_fixed)|$(allocations "$work/after.trace")"
} | awk -F '|' -v runs="$runs" -v tokens="$(awk 'NR == 1 { print $2 }' "$work/times")" '
  function thousands(n,   s, out) {
    s = sprintf("%d", n); out = ""
    while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
    return s out
  }
  function row(a, b, c) { printf "%-42s %-28s %18s\n", a, b, c }
  { name[NR] = $1; split($2, r, " "); med[NR] = r[1]; lo[NR] = r[2]; hi[NR] = r[3]; allocs[NR] = $3 }
  END {
    row("wordfreq, " thousands(tokens) " tokens", "tokens/s, median of " runs, "heap allocations")
    row("", "(min..max)", "")
    for (i = 1; i <= 2; ++i)
      row(name[i], sprintf("%.2f M/s (%.2f..%.2f)", med[i], lo[i], hi[i]), thousands(allocs[i]))
    row("after / before", sprintf("%.2fx", med[2] / med[1]),
        sprintf("%.1fx fewer (-%.1f %%)", allocs[1] / (allocs[2] > 0 ? allocs[2] : 1),
                100 * (1 - allocs[2] / allocs[1])))
  }'
