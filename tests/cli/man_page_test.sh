#!/usr/bin/env bash
# docs/lowalloc.1: groff formats it without a warning, and the section of each subcommand names
# every option `lowalloc help COMMAND` prints (an option added without its documentation fails
# here). Usage: man_page_test.sh LOWALLOC MAN_PAGE
set -u
lowalloc=$1
page=$2
. "$(dirname "$0")/options.sh"
failures=0

if ! command -v groff >/dev/null 2>&1; then
  echo "groff is not installed (package groff-base): the man page is not checked"
  exit 77
fi
warnings=$(groff -man -ww -z "$page" 2>&1)
if [ -n "$warnings" ]; then
  echo "FAIL: groff -man -ww warns about $page:"
  echo "$warnings"
  failures=$((failures + 1))
fi
if ! groff -man -Tascii -P-cbou "$page" 2>/dev/null | grep -q "EXIT STATUS"; then
  echo "FAIL: $page has no EXIT STATUS section"
  failures=$((failures + 1))
fi

# The text of the section `.SS "lowalloc COMMAND ...` up to the next .SS or .SH, with roff's
# escapes removed (\- is -, \fB and the like are fonts).
section() {
  awk -v c="$1" '
    /^\.S[SH] / { on = index($0, ".SS \"lowalloc " c " ") == 1 }
    on' "$page" | sed -E 's/\\-/-/g; s/\\f[BIRP]//g; s/\\e/\\/g'
}

for command in run report advise diff check; do
  text=$(section "$command")
  if [ -z "$text" ]; then
    echo "FAIL: $page has no section .SS \"lowalloc $command ...\""
    failures=$((failures + 1))
    continue
  fi
  options=$(help_options "$lowalloc" "$command")
  if [ -z "$options" ]; then
    echo "FAIL: lowalloc help $command lists no options"
    failures=$((failures + 1))
  fi
  for option in $options; do
    if ! printf '%s\n' "$text" | grep -qE -- "(^|[^A-Za-z-])$option([^A-Za-z-]|\$)"; then
      echo "FAIL: lowalloc help $command prints $option, the man page's section of $command does not"
      failures=$((failures + 1))
    fi
  done
done

# The exit statuses the commands use are the ones documented.
for status in 125 126 127; do
  if ! grep -q "^\.B $status\$" "$page"; then
    echo "FAIL: exit status $status is not in $page"
    failures=$((failures + 1))
  fi
done

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "the man page formats cleanly and documents every option of lowalloc help"
