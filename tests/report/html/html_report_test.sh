#!/bin/sh
# html_report_test.sh LOWALLOC PROGRAM PYTHON BROWSER_PY WORKDIR SCREENSHOT
# Traces PROGRAM (html_program: two threads calling html_report_known_function), writes its
# HTML report, and loads it in headless Chromium with browser.py: no console error, no request,
# the flame graph, timeline and size histogram drawn, the site table filled, the function found
# by search and its callers/callees shown; the screenshot is kept as SCREENSHOT. Then the same
# page with its data element corrupted must show #error. Exit 77 (skip) without chromium.
set -u
lowalloc=$1 program=$2 python=$3 driver=$4 work=$5 screenshot=$6
rm -rf "$work"
mkdir -p "$work" "$(dirname "$screenshot")" || exit 1
"$lowalloc" run -q -o "$work/html.trace" -- "$program" || { echo "lowalloc run failed"; exit 1; }
"$lowalloc" report --format html -o "$work/page.html" "$work/html.trace" ||
  { echo "lowalloc report --format html -o page.html failed"; exit 1; }
"$python" "$driver" "$work/page.html" --expect-function html_report_known_function \
  --screenshot "$screenshot"
status=$?
[ "$status" -eq 0 ] || exit "$status"
[ -s "$screenshot" ] || { echo "no screenshot in $screenshot"; exit 1; }

# The same page with its data replaced by base64 of bytes that are not gzip ("not gzip").
"$python" - "$work/page.html" "$work/corrupt.html" <<'PY' || exit 1
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
corrupt, n = re.subn(r'(<script id="lowalloc-data"[^>]*data-encoding="gzip-base64"[^>]*>)[^<]*',
                     lambda m: m.group(1) + "bm90IGd6aXA=", page)
if n != 1:
    sys.exit("html_report_test: no gzip-base64 data element in the page")
open(sys.argv[2], "w", encoding="utf-8").write(corrupt)
PY
output=$("$python" "$driver" "$work/corrupt.html" --expect-error)
status=$?
printf '%s\n' "$output"
[ "$status" -eq 0 ] || { echo "the corrupt page: status $status, expected #error"; exit 1; }

# A fork child's trace (FILE.PID) has its page: the child's function, and the summary says whose
# child it is.
"$lowalloc" run -q -o "$work/fork.trace" -- "$program" fork || { echo "lowalloc run fork failed"; exit 1; }
set -- "$work"/fork.trace.*
[ $# -eq 1 ] && [ -s "$1" ] || { echo "no single fork child trace: $*"; exit 1; }
"$lowalloc" report --format html -o "$work/child.html" "$1" ||
  { echo "lowalloc report --format html of the fork child failed"; exit 1; }
"$python" "$driver" "$work/child.html" --expect-function html_report_fork_child_function ||
  { echo "the fork child's page failed"; exit 1; }
"$python" - "$work/child.html" <<'PY' || exit 1
import base64, gzip, json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
data = re.search(r'<script id="lowalloc-data"[^>]*>([^<]*)</script>', page).group(1)
d = json.loads(gzip.decompress(base64.b64decode(data)))
if not d["process"]["fork_child"] or "a fork child of process" not in d["summary_text"]:
    sys.exit("html_report_test: the child's page does not say it is a fork child")
if d["totals"]["allocations"] != 500:
    sys.exit("html_report_test: the child's page has %d allocations, expected 500"
             % d["totals"]["allocations"])
PY
exit 0
