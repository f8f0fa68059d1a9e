#!/usr/bin/env bash
# Byte-identity check of `lowalloc report`: run one build's report over a directory of traces
# with a fixed set of options, keep every output, and compare two such runs (say, before and
# after a change to the trace reader, the analysis or the report).
#
# Usage:
#   scripts/report-identity.sh [--no-symbols-only] LOWALLOC TRACE_DIR OUT_DIR
#       runs `LOWALLOC report TRACE OPTIONS` for every trace in TRACE_DIR (FILE.trace and the
#       FILE.trace.PID of forked or exec'd children) and every variant below; writes stdout to
#       OUT_DIR/TRACE.VARIANT.out, and the exit status (first line) and stderr to
#       OUT_DIR/TRACE.VARIANT.err. --no-symbols-only runs the nosym-* variants only: their output
#       reads nothing but the trace, so it is the same on every machine (tests/golden uses them).
#   scripts/report-identity.sh --compare DIR_A DIR_B
#       compares two output directories file by file; prints "N outputs, all identical" (N
#       files) or each differing file, and exits 1 on any difference.
#
# The report is run from TRACE_DIR with a relative trace name, as the text report prints it.
#
# Regenerating tests/golden/expected (only when a change of report format is intended; files
# already in OUT_DIR are overwritten, never removed, hence the rm):
#   rm tests/golden/expected/* && scripts/report-identity.sh --no-symbols-only \
#       BUILD/bin/lowalloc tests/golden/traces tests/golden/expected
set -euo pipefail

# One variant a line: NAME|OPTIONS (options split on spaces). tests/golden/run.cmake reads the
# nosym-* lines of this table, so the test and the expected files it checks share one list.
VARIANTS='
text|
json|--format json
folded|--format folded
text-bytes-top5|--format text --sort bytes --top 5
json-temporary|--format json --sort temporary
folded-peak|--format folded --sort peak
json-nofold|--no-fold --format json
text-leaked-top3|--sort leaked --top 3
text-nofold|--no-fold
nosym-text|--no-symbols --format text
nosym-json|--no-symbols --format json
nosym-folded|--no-symbols --format folded
nosym-text-bytes-top5|--no-symbols --format text --sort bytes --top 5
nosym-text-top0|--no-symbols --top 0
nosym-json-temporary-top3|--no-symbols --format json --sort temporary --top 3
nosym-folded-peak|--no-symbols --format folded --sort peak
nosym-text-leaked-nofold|--no-symbols --no-fold --sort leaked
'

die() { echo "report-identity: $*" >&2; exit 2; }

compare() {
  local a=$1 b=$2 n=0 bad=0 name
  [[ -d $a && -d $b ]] || die "--compare needs two directories"
  # The union of both listings: a file missing on one side is a difference too.
  while IFS= read -r name; do
    n=$((n + 1))
    if [[ ! -f $a/$name ]]; then
      echo "only in $b: $name"; bad=$((bad + 1))
    elif [[ ! -f $b/$name ]]; then
      echo "only in $a: $name"; bad=$((bad + 1))
    elif ! cmp -s "$a/$name" "$b/$name"; then
      echo "differs: $name ($(cmp "$a/$name" "$b/$name" 2>&1 | sed 's/.* differ: //'))"
      bad=$((bad + 1))
    fi
  done < <( (cd "$a" && find . -maxdepth 1 -type f -printf '%P\n'; cd "$b" && find . -maxdepth 1 -type f -printf '%P\n') | LC_ALL=C sort -u)
  if ((n == 0)); then
    echo "no outputs to compare"; return 1
  elif ((bad == 0)); then
    echo "$n outputs, all identical"
  else
    echo "$bad of $n outputs differ"; return 1
  fi
}

if [[ ${1-} == --compare ]]; then
  (($# == 3)) || die "usage: $0 --compare DIR_A DIR_B"
  compare "$2" "$3"
  exit
fi

only_nosym=0
if [[ ${1-} == --no-symbols-only ]]; then only_nosym=1; shift; fi
(($# == 3)) || die "usage: $0 [--no-symbols-only] LOWALLOC TRACE_DIR OUT_DIR | --compare DIR_A DIR_B"
lowalloc=$(realpath -- "$1")
[[ -x $lowalloc ]] || die "$1: not an executable"
[[ -d $2 ]] || die "$2: not a directory"
trace_dir=$(realpath -- "$2")
mkdir -p -- "$3"
out_dir=$(realpath -- "$3")

# The report reads no locale, but pin it so a future one cannot differ between two runs. No
# debuginfod: libdw would fetch debug info over the network, and a timeout would change the output.
export LC_ALL=C
unset DEBUGINFOD_URLS
cd "$trace_dir"
traces=()
while IFS= read -r t; do traces+=("$t"); done < <(find . -maxdepth 1 -type f \( -name '*.trace' -o -name '*.trace.[0-9]*' \) -printf '%P\n' | LC_ALL=C sort)
((${#traces[@]} > 0)) || die "$2: no *.trace files"

usec() { local t=${EPOCHREALTIME/[.,]/}; echo $((10#$t)); }
seconds() { printf '%d.%03d' $(($1 / 1000000)) $(($1 % 1000000 / 1000)); }
start_all=$(usec)
count=0
for t in "${traces[@]}"; do
  start=$(usec)
  n=0
  while IFS='|' read -r variant options; do
    [[ -n $variant ]] || continue
    if ((only_nosym)) && [[ $variant != nosym-* ]]; then continue; fi
    read -r -a args <<<"$options"
    status=0
    "$lowalloc" report "$t" "${args[@]}" >"$out_dir/$t.$variant.out" 2>"$out_dir/$t.$variant.stderr" ||
      status=$?
    { echo "status $status"; cat "$out_dir/$t.$variant.stderr"; } >"$out_dir/$t.$variant.err"
    rm -f "$out_dir/$t.$variant.stderr"
    n=$((n + 1))
  done <<<"$VARIANTS"
  count=$((count + n))
  printf '%-32s %2d reports %8s s\n' "$t" "$n" "$(seconds $(($(usec) - start)))"
done
printf '%d traces, %d reports (%d files) in %s s -> %s\n' "${#traces[@]}" "$count" \
  $((2 * count)) "$(seconds $(($(usec) - start_all)))" "$out_dir"
