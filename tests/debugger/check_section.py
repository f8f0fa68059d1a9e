#!/usr/bin/env python3
"""check_section.py READELF PROGRAM PROGRAM_NOSCRIPTS

PROGRAM (two translation units with lowalloc's headers) holds exactly one copy of the printers
in .debug_gdb_scripts; PROGRAM_NOSCRIPTS (built with LOWALLOC_DISABLE_GDB_SCRIPTS) has no such
section.
"""
import subprocess
import sys

NAME = "gdb.inlined-script.lowalloc_printers"


def sections(readelf, program):
    out = subprocess.run([readelf, "-W", "-S", program], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    return [l.split("]", 1)[1].split()[0] for l in out.splitlines() if "]" in l and "[" in l]


def main():
    readelf, program, noscripts = sys.argv[1:4]
    ok = True
    if ".debug_gdb_scripts" not in sections(readelf, program):
        print("%s: no .debug_gdb_scripts section" % program)
        return 1
    dump = subprocess.run([readelf, "-p", ".debug_gdb_scripts", program],
                          stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    entries = dump.count(NAME)
    if entries != 1:
        print("%s: %d entries named %s in .debug_gdb_scripts, expected 1" % (program, entries, NAME))
        ok = False
    if ".debug_gdb_scripts" in sections(readelf, noscripts):
        print("%s: built with LOWALLOC_DISABLE_GDB_SCRIPTS but has .debug_gdb_scripts" % noscripts)
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
