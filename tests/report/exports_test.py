#!/usr/bin/env python3
"""The flame-graph exports of `lowalloc report` on traced test programs.

  exports_test.py speedscope LOWALLOC PROGRAM_DIR SOURCE_DIR SCHEMA WORK_DIR
  exports_test.py folded-lines LOWALLOC PROGRAM_DIR SOURCE_DIR WORK_DIR

speedscope: the file validates against speedscope's JSON schema (vendored next to this script,
checked with python3-jsonschema; without it the other checks run and the test is skipped, 77),
each profile's weights add up to its endValue and to `--format json`'s totals, and the sites of
two_lines.c carry the counts the program makes by construction.
folded-lines: with --lines the two allocating lines of one function are two stacks, without it
one; --lines with a format that shows lines already is a usage error.
"""
import json
import os
import re
import subprocess
import sys

K = 100  # iterations of the traced programs

# The profiles of the file in order: (name, unit, the --format json total they add up to).
PROFILES = [
    ("allocations", "none", lambda j: j["allocations"]),
    ("bytes allocated", "bytes", lambda j: j["bytes_allocated"]),
    ("temporary allocations", "none", lambda j: j["temporary"]),
    ("leaked bytes", "bytes", lambda j: j["leaked"]["bytes"]),
    ("live bytes at the peak", "bytes", lambda j: j["peak"]["bytes"]),
]
SORT_KEYS = ["allocations", "bytes", "temporary", "leaked", "peak"]
# two_lines.c, K iterations: per profile, the weight of the stacks ending in two_lines.
TWO_LINES = [2 * K, 96 * K, K, 64 * K, 64 * K]

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message)
    return condition


def run(args, status=0):
    r = subprocess.run(args, capture_output=True, text=True)
    check(r.returncode == status,
          "%s: exit status %d, not %d\n%s" % (" ".join(args), r.returncode, status, r.stderr))
    return r


def trace(lowalloc, program_dir, work_dir, name):
    path = os.path.join(work_dir, name + ".trace")
    run([lowalloc, "run", "-q", "-o", path, "--", os.path.join(program_dir, name), str(K)])
    return path


def marker_lines(source_dir):
    """The lines of two_lines.c that allocate, and the line of main that calls two_lines."""
    lines = {}
    with open(os.path.join(source_dir, "two_lines.c")) as f:
        for number, text in enumerate(f, 1):
            for marker in ("TWO_LINES_FIRST", "TWO_LINES_SECOND"):
                if marker in text:
                    lines[marker] = number
            if "head = two_lines(head)" in text:
                lines["main"] = number
    return lines


def check_speedscope(doc, totals, what, validator, version, active=0):
    """Checks one speedscope file; returns its profiles' samples as frame-name tuples."""
    check(doc.get("exporter") == "lowalloc " + version, what + ": exporter " + str(doc.get("exporter")))
    check(doc.get("activeProfileIndex") == active,
          "%s: activeProfileIndex %s, not %d" % (what, doc.get("activeProfileIndex"), active))
    if validator is not None:
        for error in validator.iter_errors(doc):
            check(False, "%s: not valid against the schema: %s at %s"
                  % (what, error.message, "/".join(str(p) for p in error.absolute_path)))
    frames = doc["shared"]["frames"]
    check(len(frames) == len({(f["name"], f.get("file"), f.get("line")) for f in frames}),
          what + ": a frame is in the table twice")
    profiles = doc["profiles"]
    check([(p["name"], p["unit"]) for p in profiles] == [(n, u) for n, u, _ in PROFILES],
          what + ": profiles " + str([(p["name"], p["unit"]) for p in profiles]))
    stacks = []
    for p, (name, _, total) in zip(profiles, PROFILES):
        where = "%s: profile %s" % (what, name)
        check(p["type"] == "sampled" and p["startValue"] == 0, where + ": not sampled from 0")
        check(len(p["samples"]) == len(p["weights"]), where + ": samples and weights differ")
        check(all(isinstance(w, int) and w > 0 for w in p["weights"]), where + ": a weight <= 0")
        check(sum(p["weights"]) == p["endValue"],
              "%s: weights add up to %d, endValue %d" % (where, sum(p["weights"]), p["endValue"]))
        check(p["endValue"] == total(totals),
              "%s: endValue %d, --format json %d" % (where, p["endValue"], total(totals)))
        ok = all(isinstance(i, int) and 0 <= i < len(frames) for s in p["samples"] for i in s)
        check(ok and all(p["samples"]), where + ": an empty stack or a frame index out of range")
        stacks.append([(tuple(frames[i]["name"] for i in s), w) if ok else ((), w)
                       for s, w in zip(p["samples"], p["weights"])])
    return stacks


def speedscope(lowalloc, program_dir, source_dir, schema_path, work_dir):
    try:
        import jsonschema
        with open(schema_path) as f:
            schema = json.load(f)
        validator = jsonschema.validators.validator_for(schema)(schema)
    except ImportError:
        validator = None
        print("python3's jsonschema is not installed (package python3-jsonschema): the files are "
              "not validated against speedscope's schema")
    version = run([lowalloc, "--version"]).stdout.split()[-1]
    marks = marker_lines(source_dir)

    two_lines = trace(lowalloc, program_dir, work_dir, "two_lines")
    totals = json.loads(run([lowalloc, "report", two_lines, "--format", "json"]).stdout)
    for extra in ([], ["--lines"], ["--no-fold"], ["--no-symbols"]):
        what = "two_lines " + " ".join(extra)
        out = run([lowalloc, "report", two_lines, "--format", "speedscope"] + extra).stdout
        stacks = check_speedscope(json.loads(out), totals, what, validator, version)
        if extra == ["--no-symbols"]:
            continue
        # The stacks that end in the program's function carry what it allocates.
        ends = re.compile(r"two_lines(:\d+)?$")
        for p, expected, samples in zip(PROFILES, TWO_LINES, stacks):
            got = sum(w for s, w in samples if s and ends.match(s[-1]))
            check(got == expected, "%s: profile %s: two_lines has %d, not %d"
                  % (what, p[0], got, expected))
        names = {s[-2:] for p in stacks for s, _ in p}
        if extra == ["--lines"]:
            want = {("main:%d" % marks["main"], "two_lines:%d" % marks[m])
                    for m in ("TWO_LINES_FIRST", "TWO_LINES_SECOND")}
            check(names == want, "%s: stacks end in %s, not %s" % (what, names, want))
            frames = json.loads(out)["shared"]["frames"]
            for f in frames:
                if f["name"].startswith("two_lines:"):
                    check(f.get("line") == int(f["name"].split(":")[1]) and
                          f.get("file", "").endswith("two_lines.c"), what + ": frame " + str(f))
        elif extra == []:
            check(names == {("main", "two_lines")}, "%s: stacks end in %s" % (what, names))
            check(all(s[0] == "main" for p in stacks for s, _ in p), what + ": a stack not from main")
        else:  # --no-fold: the C runtime's start frames stay
            check(all(s[0] == "_start" for p in stacks for s, _ in p),
                  what + ": a stack not from _start")
    # --sort picks the profile shown first.
    for k, key in enumerate(SORT_KEYS):
        out = run([lowalloc, "report", two_lines, "--format", "speedscope", "--sort", key]).stdout
        check_speedscope(json.loads(out), totals, "two_lines --sort " + key, None, version, k)

    # A C++ program with the runtime's own allocations, inlined frames and start-up allocations.
    strings = trace(lowalloc, program_dir, work_dir, "make_strings")
    totals = json.loads(run([lowalloc, "report", strings, "--format", "json"]).stdout)
    check(totals["allocations"] > K, "make_strings: %d allocations" % totals["allocations"])
    for extra in ([], ["--lines"], ["--no-fold"]):
        out = run([lowalloc, "report", strings, "--format", "speedscope"] + extra).stdout
        check_speedscope(json.loads(out), totals, "make_strings " + " ".join(extra), validator,
                         version)
    # --top keeps each profile's first sites.
    out = run([lowalloc, "report", strings, "--format", "speedscope", "--top", "1"]).stdout
    check(all(len(p["samples"]) <= 1 for p in json.loads(out)["profiles"]), "--top 1: more samples")
    return validator is not None


def folded_lines(lowalloc, program_dir, source_dir, work_dir):
    marks = marker_lines(source_dir)
    two_lines = trace(lowalloc, program_dir, work_dir, "two_lines")

    def stacks(extra):
        out = run([lowalloc, "report", two_lines, "--format", "folded"] + extra).stdout
        return sorted(line.rsplit(" ", 1)[0] for line in out.splitlines())

    plain = stacks([])
    check(plain == ["main;two_lines", "main;two_lines"], "without --lines: " + str(plain))
    lines = stacks(["--lines"])
    want = sorted("main:%d;two_lines:%d" % (marks["main"], marks[m])
                  for m in ("TWO_LINES_FIRST", "TWO_LINES_SECOND"))
    check(lines == want, "with --lines: %s, not %s" % (lines, want))
    for other in ("text", "json"):
        r = run([lowalloc, "report", two_lines, "--format", other, "--lines"], status=2)
        check("--lines is for --format folded or speedscope" in r.stderr, other + ": " + r.stderr)
    return True


def main():
    mode = sys.argv[1]
    os.makedirs(sys.argv[-1], exist_ok=True)
    if mode == "speedscope":
        validated = speedscope(*sys.argv[2:7])
    elif mode == "folded-lines":
        validated = folded_lines(*sys.argv[2:6])
    else:
        sys.exit("unknown mode " + mode)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    if not validated:
        print("the other checks passed; skipped for want of jsonschema")
        sys.exit(77)
    print("ok")


if __name__ == "__main__":
    main()
