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
exit 0
