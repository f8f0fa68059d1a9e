#!/usr/bin/env bash
# scripts/completion/lowalloc.bash: sourced, _lowalloc is called with COMP_WORDS/COMP_CWORD as
# bash sets them, and COMPREPLY is compared. Each subcommand's options complete to at least those
# `lowalloc help COMMAND` prints. Usage: completion_test.sh LOWALLOC COMPLETION_FILE WORK_DIR
set -u
lowalloc=$1
completion=$2
work=$3
. "$(dirname "$0")/options.sh"
. "$completion"
rm -rf "$work" && mkdir -p "$work/sub" "$work/bin" && cd "$work" || exit 1
touch a.trace b.trace notes.txt sub/c.trace
printf '#!/bin/sh\n' >bin/lowalloc_test_program
chmod +x bin/lowalloc_test_program
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# The completions of the command line "$@" (the last word is the one being completed), sorted,
# on one line.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _lowalloc
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
# expect "EXPECTED" WORDS...
expect() {
  local want=$1
  shift
  local got
  got=$(complete_words "$@")
  if [ "$got" != "$want" ]; then
    echo "FAIL: '$*': got '$got', expected '$want'"
    failures=$((failures + 1))
  fi
}

expect "--help --version advise check diff help report run" lowalloc ""
expect "report run" lowalloc r
expect "advise check diff report run" lowalloc help ""
expect "folded html json pprof speedscope text" lowalloc report --format ""
expect "json" lowalloc report --format j
expect "speedscope" lowalloc report --format s
expect "folded html json pprof speedscope text" lowalloc report x.trace --format = ""
expect "json text" lowalloc advise --format ""
expect "json text" lowalloc diff a.trace --format ""
expect "allocations bytes leaked peak temporary" lowalloc report --sort ""
expect "end peak" lowalloc report --inuse ""
expect "peak" lowalloc report x.trace --inuse p
expect "" lowalloc report --top ""
expect "a.trace b.trace bin sub" lowalloc report ""
expect "sub/c.trace" lowalloc advise sub/
expect "a.trace b.trace bin sub" lowalloc diff a.trace ""
expect "a.trace b.trace bin sub" lowalloc check a.trace --baseline ""
expect "bin sub" lowalloc report --debug-path ""
expect "a.trace b.trace bin notes.txt sub" lowalloc report a.trace -o ""
expect "notes.txt" lowalloc report a.trace --output n
expect "--debug-path" lowalloc report --deb
expect "--debug-path" lowalloc advise --deb
expect "--debug-path" lowalloc diff --deb
expect "--debug-path" lowalloc check --deb
expect "--max-allocations --max-bytes --max-increase --max-leaked-bytes --max-peak-bytes --max-temporary" \
  lowalloc check a.trace --max
expect "a.trace b.trace bin notes.txt sub" lowalloc run -o ""
expect "--depth" lowalloc run --de
# After "--": a program from PATH, then its arguments as files.
PATH="$work/bin:$PATH" expect "lowalloc_test_program" lowalloc run -- lowalloc_test_pro
PATH="$work/bin:$PATH" expect "lowalloc_test_program" lowalloc run -q -o x.trace -- lowalloc_test_pro
expect "bin/lowalloc_test_program" lowalloc run -- bin/low
expect "a.trace b.trace bin notes.txt sub" lowalloc run -- ./prog ""
expect "notes.txt" lowalloc run -o x.trace ./prog --flag no
# After "--": trace files only, even one whose name starts with - (made here, after the listings
# above, which it would join).
touch ./-x.trace
for command in report advise diff check; do
  expect "-x.trace" lowalloc "$command" -- -
done
expect "-x.trace" lowalloc check --max-allocations 1 -- -

# Every option of `lowalloc help COMMAND` completes.
for command in run report advise diff check; do
  listed=" $(complete_words lowalloc "$command" -) "
  for option in $(help_options "$lowalloc" "$command"); do
    case $listed in
      *" $option "*) ;;
      *)
        echo "FAIL: lowalloc help $command prints $option, the completion does not offer it"
        failures=$((failures + 1))
        ;;
    esac
  done
done

# The formats of report --format are the ones `lowalloc help report` lists.
formats=$("$lowalloc" help report | awk '/^  --format/ { on = 1; next } /^  -/ { on = 0 }
  on && /^ +[a-z]+  / { print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')
[ -n "$formats" ] || fail "no formats found in lowalloc help report"
expect "$formats" lowalloc report --format ""

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "the completion offers what was expected"
