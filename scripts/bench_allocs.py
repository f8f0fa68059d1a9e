#!/usr/bin/env python3
"""Heap allocations per iteration from Google Benchmark JSON output, or their diff between two.

Reads the memory fields that Google Benchmark writes when a MemoryManager is registered
(<lowalloc/benchmark.hpp>): allocs_per_iter, max_bytes_used, total_allocated_bytes,
net_heap_growth. Google Benchmark's own tools/compare.py (1.7, Debian's libbenchmark-tools)
compares real_time and cpu_time only; this compares the memory fields.

  scripts/bench_allocs.py RUN.json                 a Markdown table of the figures
  scripts/bench_allocs.py BASE.json NEW.json       the same, base against new, changed rows only
  scripts/bench_allocs.py --all BASE.json NEW.json every row
  scripts/bench_allocs.py --fail-on-increase BASE.json NEW.json
                                                   exit 1 if a benchmark's allocs_per_iter rose

Only per-repetition runs are read (aggregates carry no memory fields); with repetitions, the first
repetition of each benchmark is used (the counted run is the same code each time).
"""
import argparse
import json
import sys

FIELDS = ("allocs_per_iter", "max_bytes_used", "total_allocated_bytes", "net_heap_growth")


def load(path):
    """name -> {field: value} for the runs of `path` that have memory figures, in file order."""
    with open(path) as f:
        data = json.load(f)
    runs = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration" or "allocs_per_iter" not in b:
            continue
        name = b.get("run_name", b["name"])
        runs.setdefault(name, {field: b.get(field) for field in FIELDS})
    if not runs:
        sys.exit(f"{path}: no allocs_per_iter: was the memory manager registered?")
    return runs


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:.4g}"
    return f"{int(v):,}"


def one(path):
    runs = load(path)
    print("| benchmark | " + " | ".join(FIELDS) + " |")
    print("|---|" + "---:|" * len(FIELDS))
    for name, r in runs.items():
        print(f"| {name} | " + " | ".join(fmt(r[f]) for f in FIELDS) + " |")
    return 0


def diff(base_path, new_path, show_all, fail_on_increase):
    base, new = load(base_path), load(new_path)
    print(f"| benchmark | allocs/iter base | new | change | max_bytes_used base | new "
          f"| total_allocated_bytes base | new |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    rose = []
    for name in list(base) + [n for n in new if n not in base]:
        b, n = base.get(name), new.get(name)
        if b is None or n is None:
            print(f"| {name} | {'only in new' if b is None else 'only in base'} |||||||")
            continue
        if not show_all and all(b[f] == n[f] for f in FIELDS):
            continue
        change = n["allocs_per_iter"] - b["allocs_per_iter"]
        if change > 0:
            rose.append(name)
        print(f"| {name} | {fmt(b['allocs_per_iter'])} | {fmt(n['allocs_per_iter'])} "
              f"| {change:+.4g} | {fmt(b['max_bytes_used'])} | {fmt(n['max_bytes_used'])} "
              f"| {fmt(b['total_allocated_bytes'])} | {fmt(n['total_allocated_bytes'])} |")
    if fail_on_increase and rose:
        print(f"allocs_per_iter rose in {len(rose)} benchmark(s): " + ", ".join(rose),
              file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+", help="RUN.json, or BASE.json NEW.json")
    ap.add_argument("--all", action="store_true", help="with two files: unchanged rows too")
    ap.add_argument("--fail-on-increase", action="store_true",
                    help="with two files: exit 1 if allocs_per_iter rose anywhere")
    args = ap.parse_args()
    if len(args.json) == 1:
        return one(args.json[0])
    if len(args.json) == 2:
        return diff(args.json[0], args.json[1], args.all, args.fail_on_increase)
    ap.error("give one or two JSON files")


if __name__ == "__main__":
    sys.exit(main())
