#!/usr/bin/env bash
# Runs every Google Benchmark binary (bench_*) in BUILD_DIR/tests/bench and prints the Markdown tables that
# go in docs/benchmarks.md (made by scripts/bench_table.py). Then runs the counted twins
# (bench_*_allocs: the same benchmarks linked with lowalloc::alloc_count, whose timings are not
# quoted) once, briefly, and prints their heap allocations per iteration (scripts/bench_allocs.py).
#
# Usage: scripts/run-benchmarks.sh BUILD_DIR [filter]
#   filter               a --benchmark_filter regex, e.g. 'push_back'
# Environment:
#   BENCH_REPS=9         repetitions per benchmark; the table reports median and min..max
#   BENCH_MIN_TIME=0.1   seconds per repetition (Google Benchmark 1.7: a plain number)
#   BENCH_INTERLEAVE=1   interleave the repetitions of all benchmarks in random order, so a burst
#                        of load on a shared machine hits every implementation alike (0: off)
#   BENCH_CPU=           pin to this CPU with taskset (e.g. 1); empty: no pinning
#   BENCH_TIME=cpu       cpu or real: which time the table reports
#   LOWALLOC_BENCH_PHASES=1  bench_small_vector also runs each push_back code layout on its own
#   BENCH_ALLOCS=1       also run the bench_*_allocs twins (0: skip them)
#   BENCH_ALLOCS_MIN_TIME=0.01  seconds per benchmark in the twins (the counts do not need more)
# Results: BUILD_DIR/bench-results/<binary>.json (every repetition) and table.md; the twins'
# BUILD_DIR/bench-results/<twin>.json and allocs.md.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BUILD_DIR [filter]" >&2
  exit 64
fi
build_dir=${1%/}
filter=${2:-}
reps=${BENCH_REPS:-9}
min_time=${BENCH_MIN_TIME:-0.1}
interleave=${BENCH_INTERLEAVE:-1}
time_kind=${BENCH_TIME:-cpu}
script_dir=$(cd "$(dirname "$0")" && pwd)

bench_dir=$build_dir/tests/bench
if [ ! -d "$bench_dir" ]; then
  echo "$0: no $bench_dir; build first (cmake --preset release && cmake --build --preset release)" >&2
  exit 1
fi
if grep -qs '^CMAKE_BUILD_TYPE:STRING=\(Debug\|\)$' "$build_dir/CMakeCache.txt"; then
  echo "$0: warning: $build_dir is not an optimised build; timings mean little" >&2
fi

pin=()
if [ -n "${BENCH_CPU:-}" ]; then
  pin=(taskset -c "$BENCH_CPU")
fi

args=(--benchmark_repetitions="$reps" --benchmark_min_time="$min_time"
      --benchmark_out_format=json --benchmark_display_aggregates_only=true)
if [ "$interleave" = 1 ]; then
  args+=(--benchmark_enable_random_interleaving=true)
fi
if [ -n "$filter" ]; then
  args+=(--benchmark_filter="$filter")
fi

out_dir=$build_dir/bench-results
mkdir -p "$out_dir"
results=()
# Google Benchmark binaries are named bench_*; other programs in the directory are not run, and
# the counted twins (bench_*_allocs) are run after the tables.
for bin in "$bench_dir"/bench_*; do
  [ -f "$bin" ] && [ -x "$bin" ] || continue
  name=$(basename "$bin")
  case $name in *_allocs) continue ;; esac
  json=$out_dir/$name.json
  echo "== $name (${reps} repetitions, min time ${min_time} s)" >&2
  # Console output to stderr: stdout carries only the table.
  rm -f "$json"
  "${pin[@]}" "$bin" "${args[@]}" --benchmark_out="$json" >&2
  if [ ! -s "$json" ]; then
    # A filter that matches none of this binary's benchmarks: nothing to report from it.
    if [ -n "$filter" ]; then
      echo "$0: $name: no benchmark matches '$filter', skipped" >&2
      rm -f "$json"
      continue
    fi
    echo "$0: $name wrote no results" >&2
    exit 1
  fi
  results+=("$json")
done
if [ ${#results[@]} -eq 0 ]; then
  echo "$0: no benchmark binaries in $bench_dir${filter:+ with a benchmark matching '$filter'}" >&2
  exit 1
fi

command="${LOWALLOC_BENCH_PHASES:+LOWALLOC_BENCH_PHASES=$LOWALLOC_BENCH_PHASES }${BENCH_CPU:+BENCH_CPU=$BENCH_CPU }BENCH_REPS=$reps BENCH_MIN_TIME=$min_time scripts/run-benchmarks.sh $build_dir${filter:+ '$filter'}"
python3 "$script_dir/bench_table.py" --time "$time_kind" --command "$command" "${results[@]}" \
  | tee "$out_dir/table.md"

# --- heap allocations per iteration, from the counted twins ---------------------------------------
if [ "${BENCH_ALLOCS:-1}" = 1 ]; then
  allocs_args=(--benchmark_min_time="${BENCH_ALLOCS_MIN_TIME:-0.01}" --benchmark_out_format=json)
  if [ -n "$filter" ]; then
    allocs_args+=(--benchmark_filter="$filter")
  fi
  : >"$out_dir/allocs.md"
  for bin in "$bench_dir"/bench_*_allocs; do
    [ -f "$bin" ] && [ -x "$bin" ] || continue
    name=$(basename "$bin")
    json=$out_dir/$name.json
    echo "== $name (heap allocations per iteration; its timings are not quoted)" >&2
    rm -f "$json"
    "${pin[@]}" "$bin" "${allocs_args[@]}" --benchmark_out="$json" >&2
    [ -s "$json" ] || continue
    { echo; echo "### $name"; echo; python3 "$script_dir/bench_allocs.py" "$json"; } \
      | tee -a "$out_dir/allocs.md"
  done
fi
