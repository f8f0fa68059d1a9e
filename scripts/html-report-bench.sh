#!/usr/bin/env bash
# Measures `lowalloc report --format html` at scale: the page's size, the time to write it, and in
# headless Chromium (tests/report/html/browser.py) the first picture (navigation start to the
# page's 'lowalloc-first-picture' mark) and the time of each view switch (setMetric, setFold,
# setThread, search, select, sortSites, timed inside the page). Each page is loaded RUNS times;
# the table gives the median and the range (min-max) of the runs, and the issue's targets.
#
# Usage: scripts/html-report-bench.sh BUILD_DIR [RUNS=5]
#   BUILD_DIR  a configured build with bin/lowalloc and tests/bench/synthetic_trace
#              (cmake --build BUILD_DIR --target lowalloc_cli synthetic_trace)
# Environment: BENCH_WORK  where the traces and pages go (default: a temporary directory,
#              removed at the end); BENCH_CASES  which cases (default: "1m 10m 300k sample").
#
# The cases (traces from tests/bench/synthetic_trace, one thread, no symbols):
#   1m      1,000,000 allocations from 1,000 stacks (2,145 call-tree nodes)
#   10m     10,000,000 allocations from 1,000 stacks
#   300k    10,000,000 allocations from 140,000 stacks: 300,003 call-tree nodes before pruning
#   sample  tests/report/html/make_sample_page.py --nodes 300000: a page with 300k nodes that
#           are not pruned, three threads (the page alone; no report is written)
# Exit status: 0 measured (a page that fails one of browser.py's checks is counted in the
# "fail" column, not fatal), 64 usage, 77 no chromium.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 BUILD_DIR [RUNS=5]" >&2
  exit 64
fi
build_dir=${1%/}
runs=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
lowalloc=$build_dir/bin/lowalloc
synthetic=$build_dir/tests/bench/synthetic_trace
driver=$root/tests/report/html/browser.py
sample=$root/tests/report/html/make_sample_page.py
cases=${BENCH_CASES:-1m 10m 300k sample}
for tool in "$lowalloc" "$synthetic"; do
  if [ ! -x "$tool" ]; then
    echo "$0: no $tool (cmake --build $build_dir --target lowalloc_cli synthetic_trace)" >&2
    exit 64
  fi
done

if [ -n "${BENCH_WORK:-}" ]; then
  work=$BENCH_WORK
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

# case -> synthetic_trace's ALLOCATIONS STACKS
declare -A trace_args=([1m]="1000000 1000" [10m]="10000000 1000" [300k]="10000000 140000")

for name in $cases; do
  page=$work/$name.html
  : > "$work/$name.report-seconds"
  if [ "$name" = sample ]; then
    if [ ! -f "$sample" ]; then
      echo "$0: no $sample: the sample case is left out" >&2
      continue
    fi
    python3 "$sample" "$page" --nodes 300000 > /dev/null
  else
    args=${trace_args[$name]:?unknown case $name}
    # shellcheck disable=SC2086 # two numbers
    "$synthetic" "$work/$name.trace" $args
    for ((i = 0; i < runs; ++i)); do
      # The text report of the same trace first: what reading and analysing it costs.
      t0=$(date +%s.%N)
      "$lowalloc" report --top 0 "$work/$name.trace" > /dev/null
      t1=$(date +%s.%N)
      "$lowalloc" report --format html "$work/$name.trace" > "$page"
      t2=$(date +%s.%N)
      echo "$t0 $t1 $t2" | awk '{ printf "%.3f %.3f\n", $3 - $2, $2 - $1 }' \
        >> "$work/$name.report-seconds"
    done
  fi
  : > "$work/$name.runs"
  for ((i = 0; i < runs; ++i)); do
    status=0
    python3 "$driver" "$page" --search-top-site --json --quiet > "$work/$name.out" || status=$?
    if [ "$status" -eq 77 ]; then
      cat "$work/$name.out"
      exit 77
    fi
    # The figures are the line that starts with "{"; FAIL lines follow it.
    fails=$(grep -c '^FAIL' "$work/$name.out" || true)
    figures=$(grep '^{' "$work/$name.out" || echo '{}')
    echo "$fails $figures" >> "$work/$name.runs"
    grep '^FAIL' "$work/$name.out" | sed "s/^/$name run $i: /" >&2 || true
  done
done

python3 - "$work" "$cases" "$runs" <<'PY'
import json, os, statistics, sys

work, cases, run_count = sys.argv[1], sys.argv[2].split(), sys.argv[3]
MB = 1 << 20


def stat(values, fmt):
    if not values:
        return "-"
    return (fmt + " (" + fmt + "-" + fmt + ")") % (statistics.median(values), min(values),
                                                  max(values))


def switch(runs, prefix):
    """Per run, the slowest switch whose name starts with prefix."""
    out = []
    for r in runs:
        times = [ms for name, ms in r.get("switch_ms", {}).items() if name.startswith(prefix)]
        if times:
            out.append(max(times))
    return out


head = ("case", "nodes kept/all", "page", "html report s", "text report s", "first picture ms",
        "setMetric ms", "setFold ms",
        "setThread ms", "search ms", "select ms", "sortSites ms", "fail")
rows = [head]
verdicts = []
for name in cases:
    path = os.path.join(work, name + ".runs")
    if not os.path.exists(path):
        continue
    runs, fails = [], 0
    for line in open(path):
        n, _, text = line.strip().partition(" ")
        fails += int(n) > 0
        runs.append(json.loads(text or "{}"))
    timings = [line.split() for line in open(os.path.join(work, name + ".report-seconds"))
               if line.strip()]
    seconds = [float(t[0]) for t in timings]
    text_seconds = [float(t[1]) for t in timings]
    page = os.path.getsize(os.path.join(work, name + ".html"))
    data = runs[0].get("data", {}) if runs else {}
    nodes = "%s/%s" % (data.get("nodes", "-"), data.get("nodes", 0) + data.get("pruned", 0))
    first = [r["first_picture_ms"] for r in runs if "first_picture_ms" in r]
    switches = {p: switch(runs, p) for p in ("setMetric", "setFold", "setThread", "search",
                                             "select", "sortSites")}
    rows.append((name, str(nodes), "%.2f MB" % (page / MB), stat(seconds, "%.2f"),
                 stat(text_seconds, "%.2f"),
                 stat(first, "%.0f"), stat(switches["setMetric"], "%.1f"),
                 stat(switches["setFold"], "%.1f"), stat(switches["setThread"], "%.1f"),
                 stat(switches["search"], "%.1f"), stat(switches["select"], "%.1f"),
                 stat(switches["sortSites"], "%.1f"), "%d/%d" % (fails, len(runs))))
    limit = {"10m": 3, "300k": 5, "sample": 5}.get(name)
    if limit:
        verdicts.append("%s: page %.2f MB, target <= %d MB: %s" % (
            name, page / MB, limit, "met" if page <= limit * MB else "NOT MET"))
    if first:
        verdicts.append("%s: first picture median %.0f ms, target <= 1500 ms: %s" % (
            name, statistics.median(first), "met" if statistics.median(first) <= 1500
            else "NOT MET"))
    views = [max(s) for p, s in switches.items() if s and p in ("setMetric", "setFold",
                                                                   "setThread", "search")]
    if views:
        verdicts.append("%s: slowest view switch (setMetric/setFold/setThread/search) %.1f ms,"
                        " target < 100 ms: %s" % (name, max(views),
                                                 "met" if max(views) < 100 else "NOT MET"))

widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
for r in rows:
    print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
print("\nmedian (min-max) of %s runs; a switch time is the slowest of its kind in a run;"
      " text report: lowalloc report --top 0 of the same trace" % run_count)
for v in verdicts:
    print(v)
PY
