#!/usr/bin/env python3
"""Turn Google Benchmark JSON files into the Markdown tables of docs/benchmarks.md.

Usage: scripts/bench_table.py [--time cpu|real] [--command CMD] RESULT.json...

Benchmarks are named "<workload>/<impl>[/<param>]"; a group is "<workload>[/<param>]" and holds
one row per impl. For every row the table gives the median time over the repetitions, the spread
(fastest and slowest repetition relative to the median) and the ratio to the group's baseline in
the same run: lowalloc where the group has it (the vectors), else std_string (the strings).
push_back also gets a summary: lowalloc against the fastest peer (boost, absl, llvm), the array
floor, and std::vector. The string benchmarks (bench_string) get summaries too: tokens per second
of the tokenizer against std::string and boost, the speed-up against the share of long tokens,
construction on 1 and 2 threads, and the operations on short and long strings.

Per-repetition results are preferred (run without --benchmark_report_aggregates_only); files that
hold only aggregates are read too, and then the spread column shows the coefficient of variation.
Standard library only.
"""

import argparse
import json
import os
import statistics
import sys
from collections import OrderedDict

IMPL_ORDER = ["lowalloc", "std_vector", "std_vector_reserve",
              "std_string", "small_string_16", "small_string_24", "small_string_32",
              "small_string_64", "fixed_string_32", "fixed_string_128", "fixed_string",
              "boost", "absl", "llvm", "array_floor"]
WORKLOAD_ORDER = ["push_back", "push_back_O2", "copy", "move", "insert_mid_string", "iterate",
                  "tokenize", "build_tokens", "tokenize_sweep", "build_tokens_sweep",
                  "construct", "construct_2t", "find", "compare", "append", "equal"]
PEERS = ["boost", "absl", "llvm"]
BASELINE = "lowalloc"
BASELINES = [BASELINE, "std_string"]  # a group's baseline: the first of these it has
TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


class Row:
    """The timings of one benchmark (one impl in one group)."""

    def __init__(self, impl):
        self.impl = impl
        self.times = []      # per repetition, ns
        self.median = None   # ns
        self.cv = None       # only when read from aggregates
        self.error = None
        self.tokens = None   # the "tokens" counter (tokens per iteration), if any

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

    def tokens_per_s(self):
        if self.error or not self.tokens or not self.median:
            return None
        return self.tokens / self.median * 1e9


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
            if "tokens" in b and b.get("run_type") != "aggregate":
                row.tokens = b["tokens"]
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
            row.tokens = med.get("tokens", row.tokens)
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
    lead = param.split("/", 1)[0]  # "16/threads:2" sorts as 16
    num = int(lead) if lead.isdigit() else -1
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


def fmt_rate(per_s):
    if per_s is None:
        return "n/a"
    if per_s >= 1e6:
        return f"{per_s / 1e6:.1f} M/s"
    return f"{per_s / 1e3:.1f} k/s"


def baseline_of(rows):
    for impl in BASELINES:
        if impl in rows:
            return impl
    return BASELINE


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
        flags = ctx.get("compiler flags")
        if flags:
            out.append(f"- compiler flags of `{os.path.basename(path)}`: `{' '.join(flags.split())}`")
    if command:
        out.append(f"- command: `{command}`")
    out.append(f"- time: median of the per-repetition `{time_key}`; spread: the fastest and the "
               "slowest repetition relative to the median; ratios are of medians from the same run")


def is_phase_workload(workload):
    return workload.startswith("push_back_phase")


def push_back_summary(groups, out):
    """One summary per push_back workload: push_back (the build type's flags), push_back_O2."""
    workloads = OrderedDict()
    for g in groups:
        workload = g.split("/", 1)[0]
        if is_phase_workload(workload):
            continue
        if workload == "push_back" or workload.startswith("push_back_"):
            workloads.setdefault(workload, []).append(g)
    for workload, keys in workloads.items():
        push_back_summary_of(workload, keys, groups, out)


def phase_summary(groups, out):
    """push_back_phase[_O2]/<impl>/<N>/<shift>: one row per N and impl, one column per shift."""
    tables = OrderedDict()  # workload -> {N: {shift: rows}}
    for g, rows in groups.items():
        workload, _, param = g.partition("/")
        if not is_phase_workload(workload):
            continue
        n, _, shift = param.partition("/")
        tables.setdefault(workload, OrderedDict()).setdefault(n, OrderedDict())[shift] = rows
    for workload, by_n in tables.items():
        out.append(f"### {workload}: one code layout at a time (median per layout)")
        out.append("")
        shifts = sorted({int(s) for per in by_n.values() for s in per})
        out.append("| N | impl | " + " | ".join(f"+{s}" for s in shifts) + " | sum | worst / best |")
        out.append("|---|---|" + "---:|" * (len(shifts) + 2))
        for n in sorted(by_n, key=lambda x: int(x) if x.isdigit() else 0):
            per = by_n[n]
            impls = []
            for rows in per.values():
                for impl in rows:
                    if impl not in impls:
                        impls.append(impl)
            for impl in [i for i in IMPL_ORDER if i in impls] + [i for i in impls if i not in IMPL_ORDER]:
                times = [median_of(per.get(str(s), {}), impl) for s in shifts]
                cells = " | ".join(fmt_time(t) for t in times)
                known = [t for t in times if t is not None]
                total = fmt_time(sum(known)) if len(known) == len(times) else "n/a"
                worst = fmt_ratio(max(known), min(known)) if known else "n/a"
                out.append(f"| {n} | {impl} | {cells} | {total} | {worst} |")
        out.append("")


def push_back_summary_of(workload, keys, groups, out):
    out.append(f"### {workload}: summary")
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
    baseline = baseline_of(rows)
    base = median_of(rows, baseline)
    tokens = any(row.tokens for row in rows.values())
    out.append(f"### {name}")
    out.append("")
    out.append(f"| impl | median | spread | / {baseline} |" + (" tokens/s |" if tokens else ""))
    out.append("|---|---:|---:|---:|" + ("---:|" if tokens else ""))
    for row in ordered(rows):
        t = None if row.error else row.median
        line = f"| {row.impl} | {fmt_time(t)} | {row.spread()} | {fmt_ratio(t, base)} |"
        if tokens:
            line += f" {fmt_rate(row.tokens_per_s())} |"
        out.append(line)
    out.append("")


# --- string summaries (bench_string) -------------------------------------------------------------

def speedup(rows, impl, over):
    """How many times faster impl is than `over` (ratio of median times), or None."""
    t, base = median_of(rows, impl), median_of(rows, over)
    if t is None or base is None or t == 0:
        return None
    return base / t


def fmt_x(x):
    return "n/a" if x is None else f"{x:.2f}x"


def tokenize_summary(groups, out):
    for workload, what in (("tokenize", "the tokenizer (scan + strings)"),
                           ("build_tokens", "the strings alone (no scan)")):
        rows = groups.get(workload)
        if not rows:
            continue
        out.append(f"### {workload}: tokens per second, {what}")
        out.append("")
        out.append("| impl | tokens/s | time per run | spread | speed-up vs std_string "
                   "| speed-up vs boost |")
        out.append("|---|---:|---:|---:|---:|---:|")
        for row in ordered(rows):
            t = None if row.error else row.median
            out.append(f"| {row.impl} | {fmt_rate(row.tokens_per_s())} | {fmt_time(t)} "
                       f"| {row.spread()} | {fmt_x(speedup(rows, row.impl, 'std_string'))} "
                       f"| {fmt_x(speedup(rows, row.impl, 'boost'))} |")
        out.append("")


def sweep_summary(groups, out):
    for workload in ("tokenize_sweep", "build_tokens_sweep"):
        keys = [g for g in groups if g.startswith(workload + "/")]
        if not keys:
            continue
        impls = [i for i in IMPL_ORDER if any(i in groups[g] for g in keys)]
        out.append(f"### {workload}: speed-up of small_string_32 against the share of tokens "
                   "longer than 15 characters")
        out.append("")
        out.append("| tokens > 15 chars | " + " | ".join(f"{i} tokens/s (spread)" for i in impls)
                   + " | small_string_32 vs std_string | small_string_32 vs boost |")
        out.append("|---:|" + "---:|" * (len(impls) + 2))
        for g in keys:
            rows = groups[g]
            cells = []
            for i in impls:
                row = rows.get(i)
                cells.append("n/a" if row is None else
                             f"{fmt_rate(row.tokens_per_s())} ({row.spread()})")
            out.append(f"| {g.split('/', 1)[1]}% | " + " | ".join(cells)
                       + f" | {fmt_x(speedup(rows, 'small_string_32', 'std_string'))}"
                       f" | {fmt_x(speedup(rows, 'small_string_32', 'boost'))} |")
        out.append("")


def matrix_summary(title, keys, groups, out, label):
    """One row per group, one column per impl (median and spread), then each impl / baseline."""
    if not keys:
        return
    impls = [i for i in IMPL_ORDER if any(i in groups[g] for g in keys)]
    others = [i for i in impls if i != "std_string"]
    out.append(f"### {title}")
    out.append("")
    out.append(f"| {label} | " + " | ".join(impls) + " | "
               + " | ".join(f"{i} / std_string" for i in others) + " |")
    out.append("|---|" + "---:|" * (len(impls) + len(others)))
    for g in keys:
        rows = groups[g]
        cells = []
        for i in impls:
            row = rows.get(i)
            cells.append("n/a" if row is None or row.error else
                         f"{fmt_time(row.median)} ({row.spread()})")
        ratios = [fmt_ratio(median_of(rows, i), median_of(rows, "std_string")) for i in others]
        name = g if label == "operation" else g.split("/", 1)[1].replace("/threads:2", "")
        out.append(f"| {name} | "
                   + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    out.append("")


def string_summaries(groups, out):
    tokenize_summary(groups, out)
    sweep_summary(groups, out)
    matrix_summary("construct: construction + destruction of one string, 1 thread",
                   [g for g in groups if g.startswith("construct/")], groups, out, "length")
    matrix_summary("construct_2t: the same on 2 threads at once (CPU time per string and thread)",
                   [g for g in groups if g.startswith("construct_2t/")], groups, out, "length")
    ops = [g for g in groups if g.split("/", 1)[0] in ("find", "compare", "append", "equal")]
    matrix_summary("operations on short (10) and long (200 chars) strings", ops, groups, out,
                   "operation")


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
    phase_summary(groups, out)
    string_summaries(groups, out)
    for name, rows in groups.items():
        if is_phase_workload(name.split("/", 1)[0]):
            continue
        group_table(name, rows, out)
    sizeof_table(contexts, out)
    print("\n".join(out).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
