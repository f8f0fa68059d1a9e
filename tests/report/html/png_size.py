#!/usr/bin/env python3
"""png_size.py FILE: prints "png WIDTHxHEIGHT" from a PNG's header; exit 1 if it is not a PNG."""
import struct
import sys

with open(sys.argv[1], "rb") as f:
    head = f.read(24)
if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
    print("%s: not a PNG" % sys.argv[1])
    sys.exit(1)
width, height = struct.unpack(">II", head[16:24])
print("png %dx%d" % (width, height))
