#!/usr/bin/env bash
# The exit statuses of `lowalloc` (docs/lowalloc.1, EXIT STATUS): 2 for a usage error, an
# unreadable trace or an unwritable output in every command but run; run keeps env(1)'s 125,
# 126, 127; --version and help.
# Usage: exit_status_test.sh LOWALLOC VERSION WORK_DIR
set -u
lowalloc=$1
version=$2
work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0

# expect STATUS DESCRIPTION COMMAND...: runs COMMAND (stdout to out, stderr to err).
expect() {
  local want=$1 what=$2
  shift 2
  "$@" >out 2>err </dev/null
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit status $got, expected $want ($*)"
    sed 's/^/  stderr: /' err | head -5
    failures=$((failures + 1))
  fi
}
# has FILE TEXT DESCRIPTION: FILE (out or err) contains TEXT.
has() {
  if ! grep -qF -- "$2" "$1"; then
    echo "FAIL: $3: '$2' not in $1:"
    sed 's/^/  /' "$1" | head -5
    failures=$((failures + 1))
  fi
}
empty() {
  if [ -s "$1" ]; then
    echo "FAIL: $2: $1 is not empty:"
    sed 's/^/  /' "$1" | head -5
    failures=$((failures + 1))
  fi
}

# The top level.
expect 2 "no arguments" "$lowalloc"
has err "usage: lowalloc run" "no arguments"
empty out "no arguments"
expect 2 "an unknown command" "$lowalloc" bogus
has err "lowalloc: unknown command 'bogus'" "an unknown command"
expect 0 "--version" "$lowalloc" --version
if [ "$(cat out)" != "lowalloc $version" ]; then
  echo "FAIL: --version printed '$(cat out)', expected 'lowalloc $version'"
  failures=$((failures + 1))
fi
expect 0 "help" "$lowalloc" help
has out "lowalloc help [COMMAND]" "help"
expect 0 "help run" "$lowalloc" help run
has out "usage: lowalloc run" "help run"
has out "--output FILE" "help run"
for c in report advise diff check; do
  expect 0 "help $c" "$lowalloc" help "$c"
  has out "usage: lowalloc $c" "help $c"
done
expect 2 "help bogus" "$lowalloc" help bogus
has err "lowalloc help: unknown command 'bogus'" "help bogus"
empty out "help bogus"
expect 2 "help with two commands" "$lowalloc" help run report

# Usage errors: a bad option, a missing argument, a missing value.
for c in report advise diff check; do
  expect 2 "$c --bogus" "$lowalloc" "$c" --bogus
  has err "lowalloc $c: unknown option '--bogus'" "$c --bogus"
  expect 2 "$c without a trace" "$lowalloc" "$c"
  expect 2 "$c --top without a value" "$lowalloc" "$c" x.trace --top
done
expect 125 "run --bogus" "$lowalloc" run --bogus -- /bin/true
has err "lowalloc run: unknown option '--bogus'" "run --bogus"
expect 125 "run without a program" "$lowalloc" run
expect 125 "run --depth 0" "$lowalloc" run --depth 0 -- /bin/true
expect 127 "run of a missing program" "$lowalloc" run -- ./no-such-program
printf 'not a program\n' >plain.txt
chmod 644 plain.txt
expect 126 "run of a file that cannot be executed" "$lowalloc" run -- ./plain.txt
mkdir -p adir.d
expect 126 "run of a directory" "$lowalloc" run -- ./adir.d
has err "lowalloc run: ./adir.d is a directory" "run of a directory"

# Inputs that cannot be read: a missing file, a file that is not a trace.
printf 'not a trace\n' >junk.trace
for trace in /nonexistent/x.trace junk.trace; do
  expect 2 "report $trace" "$lowalloc" report "$trace"
  has err "lowalloc report: $trace: " "report $trace"
  expect 2 "advise $trace" "$lowalloc" advise --no-measure "$trace"
  expect 2 "diff $trace" "$lowalloc" diff "$trace" "$trace"
  expect 2 "check $trace" "$lowalloc" check "$trace" --max-allocations 1
done

# An output that cannot be written (/dev/full), on a trace that can be read.
expect 0 "run /bin/true" "$lowalloc" run -q -o true.trace -- /bin/true
if [ -s true.trace ]; then
  expect 0 "report" "$lowalloc" report --no-symbols true.trace
  expect 2 "report to /dev/full" sh -c '"$1" report --no-symbols true.trace >/dev/full' sh "$lowalloc"
  expect 2 "advise to /dev/full" sh -c '"$1" advise --no-measure true.trace >/dev/full' sh "$lowalloc"
  expect 2 "diff to /dev/full" \
    sh -c '"$1" diff --no-symbols true.trace true.trace >/dev/full' sh "$lowalloc"
  expect 2 "check to /dev/full" \
    sh -c '"$1" check --no-symbols true.trace --max-allocations 1G >/dev/full' sh "$lowalloc"
  expect 2 "check --junit to a missing directory" \
    "$lowalloc" check -q --no-symbols true.trace --max-allocations 1G --junit /nonexistent/j.xml
  # report -o: the file, whole; an unwritable one said at once (before the trace is read) and
  # nothing left behind; a report that was there survives a failed write.
  expect 0 "report -o" "$lowalloc" report --no-symbols -o r.txt true.trace
  empty out "report -o r.txt"
  "$lowalloc" report --no-symbols true.trace >expected.txt 2>/dev/null
  if ! cmp -s r.txt expected.txt; then
    echo "FAIL: report -o r.txt differs from the report on standard output"
    failures=$((failures + 1))
  fi
  expect 0 "report --output=" "$lowalloc" report --no-symbols --output=r2.txt true.trace
  cmp -s r2.txt expected.txt || { echo "FAIL: --output=r2.txt differs"; failures=$((failures + 1)); }
  expect 2 "report -o a missing directory" "$lowalloc" report -o /nonexistent/r.txt true.trace
  has err "lowalloc report: cannot write /nonexistent/r.txt" "report -o /nonexistent/r.txt"
  mkdir -p adir
  expect 2 "report -o a directory" "$lowalloc" report -o adir true.trace
  has err "it is a directory" "report -o adir"
  expect 2 "report -o /dev/full" "$lowalloc" report --no-symbols -o /dev/full true.trace
  expect 2 "report -o without a file" "$lowalloc" report true.trace -o
  expect 2 "report -o a missing trace" "$lowalloc" report -o r3.txt missing.trace
  [ -e r3.txt ] && { echo "FAIL: report of a missing trace created r3.txt"; failures=$((failures + 1)); }
  if [ "$(id -u)" -ne 0 ]; then # root writes into read-only directories
    mkdir -p ro && chmod a-w ro
    expect 2 "report -o into a read-only directory" "$lowalloc" report -o ro/r.txt true.trace
  fi
  leftovers=$(ls -a | grep -c '\.tmp\.')
  [ "$leftovers" -eq 0 ] || { echo "FAIL: temporary files left: $(ls -a | grep '\.tmp\.')"; failures=$((failures + 1)); }
else
  echo "FAIL: lowalloc run -o true.trace -- /bin/true wrote no trace"
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "all exit statuses as documented"
