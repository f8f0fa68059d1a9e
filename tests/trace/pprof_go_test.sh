#!/bin/bash
# `lowalloc report --format pprof` read by the real tool: make_strings traced, its profile read by
# `go tool pprof` (Debian's golang-go), whose totals of alloc_objects, alloc_space, inuse_objects
# and inuse_space (at the end, and at the peak) must equal `lowalloc report --format json`'s, and
# whose top line with -lines must be the text report's first site (function and file:line).
# Skipped (77) without go.
#
# usage: pprof_go_test.sh LOWALLOC PROGRAM_DIR WORK_DIR
set -u
lowalloc=$1
programs=$2
work=$3

if ! command -v go >/dev/null 2>&1; then
  echo "SKIP: go not found (golang-go)"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work/home"
# go tool pprof on local files only: no module download, no toolchain switch, a private home.
export HOME=$work/home GOPATH=$work/home/go GOCACHE=$work/home/cache GOPROXY=off
export GOTOOLCHAIN=local GOFLAGS=-mod=mod PPROF_TMPDIR=$work/home
unset PPROF_BINARY_PATH

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

trace=$work/make_strings.trace
"$lowalloc" run -q -o "$trace" -- "$programs/make_strings" 1000 || {
  echo "FAIL: lowalloc run"
  exit 1
}
"$lowalloc" report "$trace" --format json >"$work/report.json" || fail "report --format json"
"$lowalloc" report "$trace" >"$work/report.txt" || fail "report"
"$lowalloc" report "$trace" --format pprof >"$work/end.pb.gz" || fail "report --format pprof"
"$lowalloc" report "$trace" --format pprof --inuse peak >"$work/peak.pb.gz" ||
  fail "report --format pprof --inuse peak"

# The report's top-level totals (two-space indent in the JSON).
json_value() { sed -n "s/^  \"$1\": $2,\$/\1/p" "$work/report.json"; }
allocations=$(json_value allocations '\([0-9]*\)')
bytes=$(json_value bytes_allocated '\([0-9]*\)')
leaked_allocations=$(json_value leaked '{"allocations": \([0-9]*\), "bytes": [0-9]*}')
leaked_bytes=$(json_value leaked '{"allocations": [0-9]*, "bytes": \([0-9]*\)}')
peak_bytes=$(json_value peak '{"bytes": \([0-9]*\)}')
echo "report: $allocations allocations, $bytes bytes, leaked $leaked_allocations" \
  "($leaked_bytes bytes), peak $peak_bytes bytes"
if [ -z "$allocations" ] || [ "$allocations" -lt 1000 ]; then
  fail "the report has no 1000 allocations: '$allocations'"
fi

# "Showing nodes accounting for X, Y% of N total": N, in bytes for the space types.
pprof_total() {
  local file=$1 index=$2 out
  out=$(go tool pprof -top -unit=B -sample_index="$index" "$file" 2>"$work/pprof.err") || {
    echo "go tool pprof -sample_index=$index $file failed:" >&2
    cat "$work/pprof.err" >&2
    return
  }
  sed -n 's/^Showing nodes accounting for .* of \([0-9]*\)B\{0,1\} total$/\1/p' <<<"$out"
}
check_total() {
  local file=$1 index=$2 expected=$3 got
  got=$(pprof_total "$work/$file" "$index")
  echo "pprof $file $index: $got"
  [ "$got" = "$expected" ] || fail "$file -sample_index=$index: pprof total '$got', report $expected"
}
check_total end.pb.gz alloc_objects "$allocations"
check_total end.pb.gz alloc_space "$bytes"
check_total end.pb.gz inuse_objects "$leaked_allocations"
check_total end.pb.gz inuse_space "$leaked_bytes"
check_total peak.pb.gz alloc_objects "$allocations"
check_total peak.pb.gz inuse_space "$peak_bytes"

# The text report's first site, "    at FUNCTION (FILE:LINE)", against pprof's first line with
# -lines: "FLAT FLAT% SUM% CUM CUM% FUNCTION FILE:LINE". pprof shortens C++ names (no
# parameters): its name must start the report's.
site=$(sed -n '/^#1 /,/^$/{s/^    at \(.*\) (\(.*\))$/\1\t\2/p}' "$work/report.txt" | head -1)
site_function=${site%%$'\t'*}
site_where=${site#*$'\t'}
top=$(go tool pprof -top -lines -sample_index=alloc_objects "$work/end.pb.gz" 2>/dev/null |
  sed -n '/^ *flat /{n;p;q}')
read -r -a fields <<<"$top"
n=${#fields[@]}
top_where=${fields[n - 1]:-}
top_function=${fields[*]:5:n-6}
echo "report's first site: $site_function ($site_where)"
echo "pprof's top line:    $top_function $top_where"
[ -n "$site_where" ] && [ "$top_where" = "$site_where" ] ||
  fail "pprof's top line is at '$top_where', the report's first site at '$site_where'"
[ -n "$top_function" ] && [ "${site_function#"$top_function"}" != "$site_function" ] ||
  fail "pprof's top function '$top_function' is not the report's '$site_function'"
case $site_function in
make_strings*) ;;
*) fail "the first site is not make_strings: '$site_function'" ;;
esac

[ "$failures" -eq 0 ] || exit 1
echo "OK"
