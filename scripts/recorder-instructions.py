#!/usr/bin/env python3
"""What the recorder costs a program, counted in instructions: the program run untraced and traced
under valgrind's callgrind, which counts every instruction the program's processes execute, the
recorder's included (the writer thread's compression too). On a shared machine whose timings
spread by tens of percent from one run to the next, the counts repeat to within about 0.3%
(the writer's flushes fall at different moments), so an A/B of two recorders shows a change of
1% that a timing cannot.

Usage: scripts/recorder-instructions.py BUILD_DIR [--vs BUILD_DIR_B] [--workdir DIR] -- CMD [ARG...]
  BUILD_DIR  a build with lib/liblowalloc_trace.so and bin/lowalloc (cmake --preset release)
  --vs       a second build (the baseline), traced the same way: the ratio of the two recorders'
             added instructions
  CMD        the program; keep it small (callgrind runs it about 50 times slower)

The recorder is preloaded by its environment (what `lowalloc run` sets), with LOWALLOC_TRACE_EXEC=1
so that it survives /usr/bin/env's exec of CMD: CMD runs under valgrind as
`env LD_PRELOAD=... CMD`, untraced as `env CMD`. Counts are of the whole process tree
(--trace-children=yes). Instructions are not time: a cache miss counts as one; the recorder's
hash tables miss the cache more than the program around them does. A program whose own work
varies from run to run varies here too (python3: set PYTHONHASHSEED=0).

Prints, for each way: instructions, the ratio to untraced, the instructions the recorder added,
and those per allocation (the allocations of its traces, from `lowalloc report --format json`).
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(message):
    sys.exit(f"recorder-instructions: {message}")


def callgrind(cmd, outdir, env_extra):
    """Runs `env [VAR=VALUE...] cmd` under callgrind; returns the instructions of every process."""
    os.makedirs(outdir, exist_ok=True)
    env_words = [f"{k}={v}" for k, v in env_extra.items()]
    argv = ["valgrind", "--tool=callgrind", "--trace-children=yes",
            f"--callgrind-out-file={outdir}/callgrind.%p", "/usr/bin/env", *env_words, *cmd]
    run = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        tail = "\n".join(run.stderr.splitlines()[-5:])
        fail(f"{' '.join(cmd)} exited {run.returncode} under valgrind:\n{tail}")
    total = 0
    files = glob.glob(os.path.join(outdir, "callgrind.*"))
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"(?:summary|totals): (\d+)", line)
                if m:
                    total += int(m.group(1))
                    break
    if not files or total == 0:
        fail(f"callgrind wrote no counts in {outdir}")
    return total


def allocations(build, traces):
    """The allocations of the traces, as `lowalloc report` counts them."""
    lowalloc = os.path.join(build, "bin", "lowalloc")
    n = 0
    for trace in traces:
        run = subprocess.run([lowalloc, "report", "--format", "json", "--top", "0", trace],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if run.returncode != 0:
            fail(f"lowalloc report {trace} exited {run.returncode}")
        n += json.loads(run.stdout)["allocations"]
    return n


def recorder(build):
    lib = os.path.abspath(os.path.join(build, "lib", "liblowalloc_trace.so"))
    if not os.path.exists(lib) or not os.path.exists(os.path.join(build, "bin", "lowalloc")):
        fail(f"{build} has no lib/liblowalloc_trace.so and bin/lowalloc: build it first")
    return lib


def traced(build, cmd, workdir, name):
    lib = recorder(build)
    outdir = os.path.join(workdir, name)
    trace = os.path.join(outdir, "t.trace")
    count = callgrind(cmd, outdir, {"LD_PRELOAD": lib, "LOWALLOC_TRACE_FILE": trace,
                                    "LOWALLOC_TRACE_EXEC": "1"})
    traces = sorted(glob.glob(trace + "*"))
    if not traces:
        fail(f"the recorder of {build} wrote no trace: is it the recorder of this checkout?")
    return count, allocations(build, traces)


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        fail("usage: recorder-instructions.py BUILD_DIR [--vs BUILD_DIR_B] [--workdir DIR] -- CMD")
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="recorder-instructions.py")
    parser.add_argument("build")
    parser.add_argument("--vs")
    parser.add_argument("--workdir")
    args = parser.parse_args(argv[:split])
    cmd = argv[split + 1:]
    if not cmd:
        fail("no command after --")
    if shutil.which("valgrind") is None:
        fail("valgrind is not installed (apt-get install valgrind)")
    workdir = args.workdir or tempfile.mkdtemp(prefix="recorder-instructions-")
    if args.workdir and os.path.exists(workdir) and os.listdir(workdir):
        fail(f"--workdir {workdir} is not empty")

    for build in [args.build] + ([args.vs] if args.vs else []):
        recorder(build)
    untraced = callgrind(cmd, os.path.join(workdir, "untraced"), {})
    ways = [("A", args.build)] + ([("B", args.vs)] if args.vs else [])
    rows = []
    for label, build in ways:
        count, allocs = traced(build, cmd, workdir, label)
        rows.append((label, build, count, allocs))

    print(f"command: {' '.join(cmd)}")
    print(f"untraced: {untraced:,} instructions")
    print("| way | build | instructions | x untraced | added by the recorder | per allocation |")
    print("|---|---|---:|---:|---:|---:|")
    for label, build, count, allocs in rows:
        added = count - untraced
        per = f"{added / allocs:,.0f} ({allocs:,} allocations)" if allocs else "-"
        print(f"| {label} | {build} | {count:,} | {count / untraced:.3f}x | {added:,} | {per} |")
    if len(rows) == 2:
        (_, _, a, _), (_, _, b, _) = rows
        if b > untraced:
            print(f"A/B: traced {a / b:.4f}, added by the recorder {(a - untraced) / (b - untraced):.4f}")
    print(f"(callgrind files and traces in {workdir})")


if __name__ == "__main__":
    main()
