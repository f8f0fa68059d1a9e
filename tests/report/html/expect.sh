#!/bin/sh
# expect.sh STATUS TEXT COMMAND...: runs COMMAND, passes if it exits with STATUS and prints a
# line containing TEXT; 77 (skip) if COMMAND exits 77.
expected=$1
text=$2
shift 2
output=$("$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 77 ]; then
  exit 77
fi
if [ "$status" -ne "$expected" ]; then
  echo "expect.sh: exit status $status, expected $expected"
  exit 1
fi
if ! printf '%s\n' "$output" | grep -qF -- "$text"; then
  echo "expect.sh: no line with: $text"
  exit 1
fi
exit 0
