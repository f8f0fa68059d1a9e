#!/usr/bin/env python3
"""Writes include/lowalloc/detail/gdb_scripts.hpp, which embeds lowalloc_printers.py in a
.debug_gdb_scripts section, from the script itself.

  python3 debugger/gdb/make_header.py            # rewrite the header
  python3 debugger/gdb/make_header.py --check    # exit 1 when the header is out of date
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "lowalloc_printers.py")
HEADER = os.path.join(HERE, "..", "..", "include", "lowalloc", "detail", "gdb_scripts.hpp")

PROLOGUE = """\
// lowalloc/detail/gdb_scripts.hpp — lowalloc's gdb pretty printers, embedded in the program.
// Generated from debugger/gdb/lowalloc_printers.py by debugger/gdb/make_header.py: do not edit.
//
// Every program that includes a lowalloc container header carries the printers in its
// .debug_gdb_scripts section, so gdb loads them when it loads the program (once its auto-load
// safe-path allows it; see docs/containers.md, "In a debugger"). The script text is embedded
// (gdb's SECTION_SCRIPT_ID_PYTHON_TEXT, 4) rather than named (a file name would have to be on
// gdb's auto-load path, which depends on the install prefix). The section is "MS" (mergeable
// strings, entry size 1): the identical entries of every translation unit merge into one at link
// time. Define LOWALLOC_DISABLE_GDB_SCRIPTS to leave the section out; it is never emitted for
// targets other than ELF.
#ifndef LOWALLOC_DETAIL_GDB_SCRIPTS_HPP
#define LOWALLOC_DETAIL_GDB_SCRIPTS_HPP

#if defined(__ELF__) && !defined(LOWALLOC_DISABLE_GDB_SCRIPTS) && \\
    (defined(__GNUC__) || defined(__clang__))
#if defined(__arm__)
#define LOWALLOC_DETAIL_PROGBITS "%progbits"
#else
#define LOWALLOC_DETAIL_PROGBITS "@progbits"
#endif
// clang-format off
__asm__(".pushsection \\".debug_gdb_scripts\\", \\"MS\\"," LOWALLOC_DETAIL_PROGBITS ",1\\n"
        ".byte 4\\n"
        ".ascii \\"gdb.inlined-script.lowalloc_printers\\\\n\\"\\n"
"""

EPILOGUE = """\
        ".byte 0\\n"
        ".popsection\\n");
// clang-format on
#undef LOWALLOC_DETAIL_PROGBITS
#endif

#endif  // LOWALLOC_DETAIL_GDB_SCRIPTS_HPP
"""


def asm_line(line):
    # An .ascii directive in a C++ raw string: only the assembler's escapes are needed.
    text = line.replace("\\", "\\\\").replace('"', '\\"')
    return '        R"lowalloc(.ascii "%s\\n")lowalloc" "\\n"\n' % text


def render():
    with open(SCRIPT, encoding="utf-8") as f:
        lines = f.read().splitlines()
    return PROLOGUE + "".join(asm_line(l) for l in lines) + EPILOGUE


def main():
    text = render()
    if sys.argv[1:] == ["--check"]:
        with open(HEADER, encoding="utf-8") as f:
            if f.read() != text:
                print("%s is out of date: run python3 debugger/gdb/make_header.py"
                      % os.path.normpath(HEADER))
                return 1
        return 0
    with open(HEADER, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
