#!/usr/bin/env python3
"""Turn Google Benchmark JSON files into the Markdown tables of docs/benchmarks.md.

Usage: scripts/bench_table.py [--time cpu|real] [--command CMD] RESULT.json...

Benchmarks are named "<workload>/<impl>[/<param>]"; a group is "<workload>[/<param>]" and holds
one row per impl. For every row the table gives the median time over the repetitions, the spread
(fastest and slowest repetition relative to the median) and the ratio to lowalloc in the same
run. push_back also gets a summary: lowalloc against the fastest peer (boost, absl, llvm), the
array floor, and std::vector.

Per-repetition results are preferred (run without --benchmark_report_aggregates_only); files that
hold only aggregates are read too, and then the spread column shows the coefficient of variation.
Standard library only.
"""

import argparse
import json
import statistics
import sys
from collections import OrderedDict

IMPL_ORDER = ["lowalloc", "std_vector", "std_vector_reserve", "boost", "absl", "llvm",
              "array_floor"]
WORKLOAD_ORDER = ["push_back", "copy", "move", "insert_mid_string", "iterate"]
PEERS = ["boost", "absl", "llvm"]
BASELINE = "lowalloc"
TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


class Row:
    """The timings of one benchmark (one impl in one group)."""

    def __init__(self, impl):
        self.impl = impl
        self.times = []      # per repetition, ns
        self.median = None   # ns
        self.cv = None       # only when read from aggregates
        self.error = None

    def finish(self):
        if self.times:
            self.median = statistics.median(self.times)

    def spread(self):
        if self.error:
            return "error"
        if len(self.times) >= 2 and self.median:
            lo = (min(self.times) / self.median - 1.0) * 100.0
            hi = (max(self.times) / self.median - 1.0) * 100.0
            return f"{lo:+.1f}%..{hi:+.1f}%"
        if self.cv is not None:
            return f"cv {self.cv * 100.0:.1f}%"
        return "n/a"


def split_name(name):
    """'push_back/lowalloc/8' -> ('push_back', 'lowalloc', '8'); param may be ''."""
    parts = name.split("/")
    if len(parts) < 2:
        return None
    workload, impl, param = parts[0], parts[1], "/".join(parts[2:])
    return workload, impl, param


def load(paths, time_key):
    """Returns (contexts, groups): groups is {group name: {impl: Row}} in file order."""
    contexts = []
    groups = OrderedDict()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        contexts.append((path, data.get("context", {})))
        aggregates = {}
        for b in data.get("benchmarks", []):
            name = b.get("run_name", b["name"])
            parsed = split_name(name)
            if parsed is None:
                continue
            workload, impl, param = parsed
            group = f"{workload}/{param}" if param else workload
            row = groups.setdefault(group, OrderedDict()).setdefault(impl, Row(impl))
            if b.get("error_occurred"):
                row.error = b.get("error_message", "error")
                continue
            scale = TO_NS[b.get("time_unit", "ns")]
            if b.get("run_type") == "aggregate":
                aggregates.setdefault((group, impl), {})[b.get("aggregate_name")] = b
            else:
                row.times.append(b[time_key] * scale)
        # Aggregates only where no per-repetition result was kept.
        for (group, impl), agg in aggregates.items():
            row = groups[group][impl]
            if row.times or "median" not in agg:
                continue
            med = agg["median"]
            row.median = med[time_key] * TO_NS[med.get("time_unit", "ns")]
            if "cv" in agg:
                row.cv = agg["cv"][time_key]
    for rows in groups.values():
        for row in rows.values():
            if row.median is None:
                row.finish()
    return contexts, OrderedDict(sorted(groups.items(), key=lambda kv: group_key(kv[0])))


def group_key(group):
    """Known workloads first in WORKLOAD_ORDER, then by name; params numerically."""
    workload, _, param = group.partition("/")
    rank = WORKLOAD_ORDER.index(workload) if workload in WORKLOAD_ORDER else len(WORKLOAD_ORDER)
    num = int(param) if param.isdigit() else -1
    return (rank, workload, num, param)


def fmt_time(ns):
    if ns is None:
        return "n/a"
    if ns < 1e3:
        return f"{ns:.3g} ns" if ns < 100 else f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.3g} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.3g} ms"
    return f"{ns / 1e9:.3g} s"


def fmt_ratio(num, den):
    if num is None or den is None or den == 0:
        return "n/a"
    return f"{num / den:.2f}x"


def ordered(rows):
    known = [rows[i] for i in IMPL_ORDER if i in rows]
    others = [r for i, r in rows.items() if i not in IMPL_ORDER]
    return known + others


def median_of(rows, impl):
    row = rows.get(impl)
    return row.median if row is not None and not row.error else None


def fastest_peer(rows):
    best = None
    for impl in PEERS:
        t = median_of(rows, impl)
        if t is not None and (best is None or t < best[1]):
            best = (impl, t)
    return best


def print_context(contexts, time_key, command, out):
    for path, ctx in contexts:
        out.append(f"- results: `{path}`, run {ctx.get('date', '?')} on `{ctx.get('host_name', '?')}`"
                   f" ({ctx.get('num_cpus', '?')} CPUs, {ctx.get('mhz_per_cpu', '?')} MHz, load "
                   f"average {', '.join(f'{x:.2f}' for x in ctx.get('load_avg', []))})")
        if ctx.get("cpu_scaling_enabled"):
            out.append("- **CPU frequency scaling was enabled: timings are noisy**")
        lengths = ctx.get("push_back lengths")
        if lengths:
            out.append(f"- push_back lengths: {lengths}")
    if command:
        out.append(f"- command: `{command}`")
    out.append(f"- time: median of the per-repetition `{time_key}`; spread: the fastest and the "
               "slowest repetition relative to the median; ratios are of medians from the same run")


def push_back_summary(groups, out):
    keys = [g for g in groups if g.startswith("push_back/")]
    if not keys:
        return
    out.append("### push_back: summary")
    out.append("")
    out.append("| N | lowalloc | spread | fastest peer | lowalloc / fastest peer "
               "| lowalloc / array_floor | std_vector / lowalloc | std_vector_reserve / lowalloc |")
    out.append("|---|---:|---:|---|---:|---:|---:|---:|")
    for g in keys:
        rows = groups[g]
        base = median_of(rows, BASELINE)
        spread = rows[BASELINE].spread() if BASELINE in rows else "n/a"
        peer = fastest_peer(rows)
        peer_txt = f"{peer[0]} {fmt_time(peer[1])}" if peer else "n/a"
        out.append(
            f"| {g.split('/', 1)[1]} | {fmt_time(base)} | {spread} | {peer_txt} "
            f"| {fmt_ratio(base, peer[1] if peer else None)} "
            f"| {fmt_ratio(base, median_of(rows, 'array_floor'))} "
            f"| {fmt_ratio(median_of(rows, 'std_vector'), base)} "
            f"| {fmt_ratio(median_of(rows, 'std_vector_reserve'), base)} |")
    out.append("")
    out.append("Ratios above 1 in the peer and floor columns mean lowalloc is slower; above 1 in "
               "the std columns mean std::vector is slower.")
    out.append("")


def group_table(name, rows, out):
    base = median_of(rows, BASELINE)
    out.append(f"### {name}")
    out.append("")
    out.append("| impl | median | spread | / lowalloc |")
    out.append("|---|---:|---:|---:|")
    for row in ordered(rows):
        t = None if row.error else row.median
        out.append(f"| {row.impl} | {fmt_time(t)} | {row.spread()} | {fmt_ratio(t, base)} |")
    out.append("")


def sizeof_table(contexts, out):
    sizes = OrderedDict()
    for _, ctx in contexts:
        for key, value in ctx.items():
            if key.startswith("sizeof "):
                impl, _, n = key[len("sizeof "):].partition("<int, ")
                sizes.setdefault(impl, {})[n.rstrip(">")] = value
    if not sizes:
        return
    ns = sorted({n for v in sizes.values() for n in v}, key=int)
    out.append("### sizeof(vector of int with N inline)")
    out.append("")
    out.append("| impl | " + " | ".join(f"N={n}" for n in ns) + " |")
    out.append("|---|" + "---:|" * len(ns))
    for impl in [i for i in IMPL_ORDER if i in sizes] + [i for i in sizes if i not in IMPL_ORDER]:
        out.append(f"| {impl} | " + " | ".join(sizes[impl].get(n, "") for n in ns) + " |")
    out.append("")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="Google Benchmark JSON output files")
    ap.add_argument("--time", choices=["cpu", "real"], default="cpu",
                    help="which time to report (default cpu: robust to preemption on a shared "
                         "machine)")
    ap.add_argument("--command", default="", help="the command that produced the results")
    args = ap.parse_args(argv)
    time_key = f"{args.time}_time"

    contexts, groups = load(args.files, time_key)
    out = []
    print_context(contexts, time_key, args.command, out)
    out.append("")
    push_back_summary(groups, out)
    for name, rows in groups.items():
        group_table(name, rows, out)
    sizeof_table(contexts, out)
    print("\n".join(out).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
