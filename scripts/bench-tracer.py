#!/usr/bin/env python3
"""The tracer benchmark: wall time of a string-heavy program untraced, under `lowalloc run` and
under heaptrack, in the same run, with trace sizes and report times. Prints a Markdown table of
medians (min..max) and the ratios that docs/benchmarks.md quotes.

Usage: scripts/bench-tracer.py BUILD_DIR [--count N] [--reps R] [--threads 1,2]
  BUILD_DIR  a release build with bin/lowalloc and tests/bench/trace_workload
             (cmake --preset release && cmake --build --preset release)

The workload (tests/bench/trace_workload.cpp) builds COUNT std::strings of random length 5..40
per thread, keeps 1%. Repetitions of the three ways of running it are interleaved, so a burst of
load on a shared machine hits them alike.
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, env=None):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def spread(values):
    return statistics.median(values), min(values), max(values)


def fmt(values, unit="s", scale=1.0):
    med, lo, hi = spread([v * scale for v in values])
    return f"{med:.3f} {unit} ({lo:.3f}..{hi:.3f})"


def heaptrack_counts(path):
    out = subprocess.run(["heaptrack_print", "--print-peaks", "0", "--print-allocators", "0",
                          "--print-temporary", "0", "--print-leaks", "0", path],
                         check=True, capture_output=True, text=True).stdout
    calls = re.search(r"calls to allocation functions: (\d+)", out)
    return int(calls.group(1)) if calls else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--count", type=int, default=1000000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()

    lowalloc = os.path.join(args.build, "bin", "lowalloc")
    workload = os.path.join(args.build, "tests", "bench", "trace_workload")
    for f in (lowalloc, workload):
        if not os.access(f, os.X_OK):
            sys.exit(f"bench-tracer: {f} not found; build the release preset first")
    have_heaptrack = shutil.which("heaptrack") is not None and shutil.which("heaptrack_print")
    if not have_heaptrack:
        print("bench-tracer: heaptrack not found; measuring without it", file=sys.stderr)

    tmp = tempfile.mkdtemp(prefix="lowalloc-bench-")
    rows = []
    try:
        for threads in [int(t) for t in args.threads.split(",")]:
            prog = [workload, str(args.count), str(threads)]
            plain, ours, theirs = [], [], []
            ours_report, theirs_report = [], []
            ours_bytes = theirs_bytes = 0
            ours_allocs = theirs_allocs = None
            for rep in range(args.reps):
                plain.append(timed(prog))
                trace = os.path.join(tmp, "l.trace")
                ours.append(timed([lowalloc, "run", "-q", "-o", trace, "--"] + prog))
                ours_bytes = os.path.getsize(trace)
                ours_report.append(timed([lowalloc, "report", trace]))
                if ours_allocs is None:
                    j = json.loads(subprocess.run([lowalloc, "report", "--format", "json", "--top", "0",
                                                   trace], check=True, capture_output=True,
                                                  text=True).stdout)
                    ours_allocs = j["allocations"]
                if have_heaptrack:
                    for f in glob.glob(os.path.join(tmp, "h.*")):
                        os.remove(f)
                    theirs.append(timed(["heaptrack", "-o", os.path.join(tmp, "h")] + prog))
                    hfile = glob.glob(os.path.join(tmp, "h.*"))[0]
                    theirs_bytes = os.path.getsize(hfile)
                    theirs_report.append(timed(["heaptrack_print", hfile]))
                    if theirs_allocs is None:
                        theirs_allocs = heaptrack_counts(hfile)
            rows.append((threads, plain, ours, theirs, ours_report, theirs_report, ours_bytes,
                         theirs_bytes, ours_allocs, theirs_allocs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"workload: {args.count:,} strings per thread, {args.reps} repetitions, "
          "median (min..max)\n")
    print("| threads | untraced | lowalloc run | ratio | heaptrack | ratio | "
          "bytes/alloc lowalloc | bytes/alloc heaptrack | report | heaptrack_print |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base_ratio = None
    for (threads, plain, ours, theirs, orep, trep, obytes, tbytes, oallocs, tallocs) in rows:
        p = statistics.median(plain)
        r_ours = statistics.median(ours) / p
        r_theirs = statistics.median(theirs) / p if theirs else float("nan")
        if base_ratio is None:
            base_ratio = r_ours
        print(f"| {threads} | {fmt(plain)} | {fmt(ours)} | {r_ours:.2f}x | "
              f"{fmt(theirs) if theirs else '-'} | {r_theirs:.2f}x | "
              f"{obytes / oallocs:.3f} ({oallocs:,} allocs) | "
              f"{(tbytes / tallocs) if tallocs else float('nan'):.3f} "
              f"({tallocs if tallocs else 0:,} allocs) | "
              f"{fmt(orep)} | {fmt(trep) if trep else '-'} |")
    if len(rows) > 1:
        last = statistics.median(rows[-1][2]) / statistics.median(rows[-1][1])
        print(f"\nlowalloc slowdown with {rows[-1][0]} threads vs 1: "
              f"{last:.2f}x / {base_ratio:.2f}x = {(last / base_ratio - 1) * 100:+.1f}%")


if __name__ == "__main__":
    main()
