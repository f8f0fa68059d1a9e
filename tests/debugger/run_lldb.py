#!/usr/bin/env python3
"""run_lldb.py LLDB PROGRAM SOURCE FORMATTERS EXPECTED

Imports the LLDB formatters, stops PROGRAM at the line of SOURCE marked "break here", shows each
variable with `frame variable` and compares the output with EXPECTED (addresses masked). Exits 77
(skipped) when LLDB is empty or lldb's Python cannot run.
"""
import glob
import os
import re
import subprocess
import sys

SKIP = 77
VARIABLES = ("vi_inline vi_heap vbase vempty iv iv0 s_short s_long s24_long s_quote fs fs_big "
             "s16 ar ar_chunks pl").split()


def run(lldb, program, source, formatters, env):
    with open(source, encoding="utf-8") as f:
        line = next(i for i, text in enumerate(f, 1) if "// break here" in text)
    # The program's own output goes to /dev/null: on the same pipe as lldb's it could land
    # between lldb's lines.
    args = [lldb, "-b", "-o", "command script import " + formatters,
            "-o", "breakpoint set -f %s -l %d" % (os.path.basename(source), line), "-o", "process launch --stdout /dev/null"]
    for v in VARIABLES:
        args += ["-o", "frame variable " + v]
    args += ["-o", "frame variable vi_heap[9]", "-o", "kill", program]
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=60, env=env).stdout


def broken(out):
    return "No module named" in out or "run_one_line" in out


def main():
    lldb, program, source, formatters, expected = sys.argv[1:6]
    if not lldb or lldb.endswith("-NOTFOUND"):  # CMake's find_program found none
        print("lldb not found: test skipped (Debian: apt-get install lldb-14)")
        return SKIP
    env = dict(os.environ)
    out = run(lldb, program, source, formatters, env)
    if broken(out):
        # Debian 12's python3-lldb-14 splits its module between two directories; the complete
        # one is found here (with the system's packages, for its `six`).
        for d in sorted(glob.glob("/usr/lib/llvm-*/lib/python3*/dist-packages")):
            if os.path.exists(os.path.join(d, "lldb", "embedded_interpreter.py")):
                env["PYTHONPATH"] = d + ":/usr/lib/python3/dist-packages"
                out = run(lldb, program, source, formatters, env)
                break
    if broken(out):
        print("lldb's Python scripting does not work here: test skipped")
        return SKIP
    shown, keep = [], False
    for l in out.splitlines():
        if l.startswith("(lldb) frame variable"):
            keep = True
            continue
        if l.startswith("(lldb) kill"):
            break
        if keep and not l.startswith("error:"):  # lldb's own complaints about the DWARF
            shown.append(re.sub(r"0x[0-9a-f]{8,16}", "0xADDRESS", l))
    with open(expected, encoding="utf-8") as f:
        want = f.read().splitlines()
    if shown != want:
        print("lldb printed:\n" + "\n".join(shown))
        print("expected (%s):\n" % expected + "\n".join(want))
        print("--- lldb's whole output ---\n" + out)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
