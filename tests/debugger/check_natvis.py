#!/usr/bin/env python3
"""check_natvis.py NATVIS: the file is well-formed natvis XML with a view of each lowalloc type,
and every view's expressions name only data members that exist in the headers."""
import os
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://schemas.microsoft.com/vstudio/debugger/natvis/2010}"
TYPES = ["lowalloc::small_vector_base<*>", "lowalloc::small_vector<*>",
         "lowalloc::inplace_vector<*,*>", "lowalloc::inplace_vector<*,0>",
         "lowalloc::small_storage<*,*,*>", "lowalloc::fixed_storage<*,*>",
         "lowalloc::basic_string<*>", "lowalloc::arena_base", "lowalloc::pool"]


def main():
    path = sys.argv[1]
    root = ET.parse(path).getroot()
    if root.tag != NS + "AutoVisualizer":
        print("%s: the root element is %s, not AutoVisualizer" % (path, root.tag))
        return 1
    names = [t.get("Name") for t in root.findall(NS + "Type")]
    missing = [t for t in TYPES if t not in names]
    if missing:
        print("%s: no view of %s" % (path, ", ".join(missing)))
        return 1
    # Every member an expression names (word_ with a trailing underscore) is in the headers.
    include = os.path.join(os.path.dirname(os.path.abspath(path)), "..", "include", "lowalloc")
    headers = ""
    for d, _, files in os.walk(include):
        for f in files:
            with open(os.path.join(d, f), encoding="utf-8") as h:
                headers += h.read()
    text = open(path, encoding="utf-8").read()
    unknown = sorted({m for m in re.findall(r"\b([a-z_]+_)\b", text)
                      if not re.search(r"\b%s\b" % m, headers)})
    if unknown:
        print("%s: members not found in include/lowalloc: %s" % (path, ", ".join(unknown)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
