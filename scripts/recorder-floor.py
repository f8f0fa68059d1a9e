#!/usr/bin/env python3
"""The floor under recording: what a program pays for having its allocations seen at all, against
what lowalloc's recorder costs it, in the same rounds. Each program of the tracer's corpus
(scripts/bench-tracer.py), or one command of yours, runs five ways:

  untraced      as it is
  interposed    under the floor preload (tests/bench/floor_preload.c, LOWALLOC_FLOOR=pass): the
                allocation functions interposed, each call passed to glibc and counted
  logged        the same, and every event appended to a thread buffer as a raw record (16 bytes
                an allocation: address, size, caller; 8 a free), each full buffer compressed by
                zstd at level 1 (LOWALLOC_FLOOR=zstd): a log of every event, the cheapest way
  depth 1       `lowalloc run --depth 1`: the recorder, each stack cut to the hook's caller
  lowalloc      `lowalloc run`

A way's cost is its CPU time (user+sys of the process tree) over the untraced run's in the same
round; the rounds run the five ways in a new random order each, so that a burst of load on a
shared machine falls on all of them alike. Printed per program: the events the floor counted
(allocations and frees), the untraced CPU and what it spends an event, and each way's ratio,
median (min..max) over the rounds.

What the columns tell: `interposed` is what no recorder of an unmodified program can go below;
`logged` what recording every event costs before any stack is identified or block named, written
as naively as it can be; `depth 1` what lowalloc's event path costs without the walk of the
stack; `lowalloc` all of it. A bound on a recorder's overhead below the `logged` column of a
program asks for a trace that is not a log of its events.

Usage: scripts/recorder-floor.py BUILD_DIR [--only NAME,...] [--rounds N] [--quick] [--pin]
                                 [--workdir DIR] [--json OUT]
       scripts/recorder-floor.py BUILD_DIR [--name NAME] [--fresh PATH] [--rounds N] [--pin]
                                 -- CMD [ARG...]
  BUILD_DIR  a release build with bin/lowalloc, lib/liblowalloc_floor.so and
             tests/bench/trace_workload (cmake --preset release && cmake --build --preset release)
  --only     corpus programs, comma-separated (default: all of bench-tracer.py's corpus)
  --rounds   rounds of the five ways (default 5)
  --quick    corpus workloads ~10x smaller, as bench-tracer.py --quick
  --pin      everything on CPU 0 (taskset)
  -- CMD     one program of yours instead of the corpus, run in the current directory; --fresh
             PATH is removed before each run (an output CMD refuses to overwrite)
"""
import argparse
import importlib.util
import json
import os
import random
import shutil
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAYS = ["untraced", "interposed", "logged", "depth 1", "lowalloc"]


def load_bench_tracer():
    """scripts/bench-tracer.py as a module: its corpus, its preparation of inputs, its timing."""
    path = os.path.join(ROOT, "scripts", "bench-tracer.py")
    spec = importlib.util.spec_from_file_location("bench_tracer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def floor_counts(prefix):
    """Allocations and frees the floor preload wrote to PREFIX and PREFIX.PID (forked children)."""
    allocations = frees = 0
    directory, base = os.path.split(prefix)
    for name in os.listdir(directory):
        if name != base and not (name.startswith(base + ".") and name[len(base) + 1:].isdigit()):
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == "allocations":
                    allocations += int(value)
                elif key == "frees":
                    frees += int(value)
        os.remove(os.path.join(directory, name))
    return allocations, frees


def argv_of(way, command, build, lowalloc, tmp):
    preload = os.path.join(build, "lib", "liblowalloc_floor.so")
    trace = os.path.join(tmp, "l.trace")
    if way == "untraced":
        return command.argv
    if way == "interposed":
        # Through env: /usr/bin/time and taskset, which start the program, stay untouched.
        return ["env", f"LD_PRELOAD={preload}", "LOWALLOC_FLOOR=pass",
                f"LOWALLOC_FLOOR_COUNTS={os.path.join(tmp, 'counts')}"] + command.argv
    if way == "logged":
        return ["env", f"LD_PRELOAD={preload}", "LOWALLOC_FLOOR=zstd"] + command.argv
    if way == "depth 1":
        return [lowalloc, "run", "-q", "--depth", "1", "-o", trace, "--"] + command.argv
    return [lowalloc, "run", "-q", "-o", trace, "--"] + command.argv


def measure_program(bt, program, ctx, build, rounds):
    command = program.prepare(ctx)
    cpu = {way: [] for way in WAYS}
    ratios = {way: [] for way in WAYS[1:]}
    events = []
    failed = None
    for _ in range(rounds):
        order = WAYS[:]
        random.shuffle(order)
        run_cpu = {}
        for way in order:
            if command.fresh:
                bt.remove(command.fresh)
            for f in bt.traced_files(os.path.join(ctx.tmp, "l.trace")):
                os.remove(f)
            run = bt.measure(argv_of(way, command, build, ctx.lowalloc, ctx.tmp), env=command.env,
                             pin=ctx.pin)
            if run.code != 0:
                failed = f"{way} exited {bt.exit_text(run.code)}"
                break
            run_cpu[way] = run.cpu
            if way == "interposed":
                events.append(sum(floor_counts(os.path.join(ctx.tmp, "counts"))))
        if failed:
            break
        for way in WAYS:
            cpu[way].append(run_cpu[way])
        for way in WAYS[1:]:
            if run_cpu["untraced"] > 0:
                ratios[way].append(run_cpu[way] / run_cpu["untraced"])
    if command.fresh:
        bt.remove(command.fresh)
    return {"name": program.name, "argv": command.argv, "failed": failed, "events": events,
            "cpu": cpu, "ratios": ratios}


def cell(values):
    if not values:
        return "-"
    return f"{statistics.median(values):.2f}x ({min(values):.2f}..{max(values):.2f})"


def print_table(results, rounds):
    print(f"CPU (user+sys of the process tree) over the untraced run of the same round, median "
          f"(min..max) of {rounds} rounds\n")
    print("| program | events | untraced CPU | ns an event | interposed | logged | depth 1 | "
          "lowalloc |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        untraced = statistics.median(r["cpu"]["untraced"]) if r["cpu"]["untraced"] else 0
        events = statistics.median(r["events"]) if r["events"] else 0
        per_event = f"{untraced / events * 1e9:,.0f}" if events >= 1000 else "-"
        print(f"| {r['name']} | {events:,.0f} | {untraced:.3f} s | {per_event} | "
              + " | ".join(cell(r["ratios"][way]) for way in WAYS[1:]) + " |")
    for r in results:
        if r["failed"]:
            print(f"\n{r['name']}: {r['failed']}; not measured further")


def main():
    bt = load_bench_tracer()
    argv, command = bt.split_command(sys.argv[1:], "recorder-floor")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--only", help="corpus programs to measure, comma-separated")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the five ways (default 5)")
    ap.add_argument("--quick", action="store_true", help="corpus workloads ~10x smaller")
    ap.add_argument("--pin", action="store_true", help="run everything on CPU 0 (taskset)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "lowalloc-bench-corpus"),
                    help="where the corpus inputs are generated and kept")
    ap.add_argument("--json", help="also write the measurements to this file")
    ap.add_argument("--name", help="with -- CMD: the name of its row (default: CMD's file name)")
    ap.add_argument("--fresh", help="with -- CMD: a path removed before each run")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        sys.exit("recorder-floor: --rounds takes a number from 1")
    if command is not None and args.only:
        sys.exit("recorder-floor: -- CMD measures one program; not with --only")
    if command is None and (args.name or args.fresh):
        sys.exit("recorder-floor: --name and --fresh go with -- CMD")

    build = os.path.abspath(args.build)
    lowalloc = os.path.join(build, "bin", "lowalloc")
    workload = os.path.join(build, "tests", "bench", "trace_workload")
    preload = os.path.join(build, "lib", "liblowalloc_floor.so")
    for f in (lowalloc, workload, preload):
        if not os.path.exists(f):
            sys.exit(f"recorder-floor: {f} not found; build the release preset first")
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("recorder-floor: /usr/bin/time not found (apt package time)")

    if command is not None:
        fresh = os.path.abspath(args.fresh) if args.fresh else None
        programs = [bt.Program(args.name or os.path.basename(command[0]), {},
                               lambda ctx: bt.Command(command, fresh=fresh))]
    else:
        programs = bt.selected(args.only)
    os.makedirs(args.workdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="lowalloc-floor-", dir=args.workdir)
    args.reps = args.rounds  # what bench-tracer's Context reads
    ctx = bt.Context(args, lowalloc, workload, tmp)
    os.makedirs(ctx.workdir, exist_ok=True)
    results = []
    try:
        for program in programs:
            missing = bt.missing_tools(program)
            if missing:
                print(f"recorder-floor: skipping {program.name}: missing {', '.join(missing)}",
                      file=sys.stderr)
                continue
            print(f"recorder-floor: {program.name}", file=sys.stderr)
            results.append(measure_program(bt, program, ctx, build, args.rounds))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print_table(results, args.rounds)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"rounds": args.rounds, "pinned": args.pin, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
