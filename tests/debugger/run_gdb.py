#!/usr/bin/env python3
"""Prints each lowalloc type in gdb -batch and compares the values with an expected file.

  run_gdb.py GDB PROGRAM SOURCE COMMANDS EXPECTED --source PRINTERS   # printers loaded by hand
  run_gdb.py GDB PROGRAM SOURCE COMMANDS EXPECTED --auto-load         # from .debug_gdb_scripts

The program stops at the line of SOURCE marked "break here"; every `$N = ...` line gdb prints
for COMMANDS must equal EXPECTED's lines, in order.
"""
import subprocess
import sys


def main():
    gdb, program, source, commands, expected, mode = sys.argv[1:7]
    with open(source, encoding="utf-8") as f:
        line = next(i for i, text in enumerate(f, 1) if "// break here" in text)
    args = [gdb, "-batch", "-nx", "-iex", "set debuginfod enabled off"]
    if mode == "--source":
        # The program's own section stays declined (it is not on the default safe-path); the
        # C++ library's printers still load from gdb's data directory.
        args += ["-iex", "source " + sys.argv[7]]
    elif mode == "--auto-load":
        args += ["-iex", "add-auto-load-safe-path " + program]
    else:
        sys.exit("unknown mode " + mode)
    args += ["-ex", "break %s:%d" % (source, line), "-ex", "run", "-x", commands,
             "-ex", "info auto-load python-scripts", program]
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=60)
    out = run.stdout.splitlines()
    values = [l for l in out if l.startswith("$")]
    with open(expected, encoding="utf-8") as f:
        want = f.read().splitlines()
    ok = True
    if values != want:
        ok = False
        print("gdb printed:")
        print("\n".join(values))
        print("expected (%s):" % expected)
        print("\n".join(want))
    loaded = any(l.split()[:2] == ["Yes", "gdb.inlined-script.lowalloc_printers"] for l in out)
    if mode == "--auto-load" and not loaded:
        ok = False
        print("the printers were not auto-loaded from .debug_gdb_scripts")
    if mode == "--source" and loaded:
        ok = False
        print("the program's .debug_gdb_scripts was meant to be declined")
    if not ok:
        print("--- gdb's whole output ---")
        print(run.stdout)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
