# What the install tests share. Sourced; each test sets `failures=0` first.

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# The allocations in trace $2, read with the lowalloc command $1.
allocations() {
  "$1" report --top 0 --no-symbols "$2" | awk '$1 == "allocations" { gsub(",", "", $2); print $2; exit }'
}

# Traces malloc_loop ($2: the test programs' directory) with K=1000 and K=0 using the lowalloc
# command $1, in directory $3; checks that the difference is exactly 1000 allocations.
check_traces_malloc_loop() {
  local lowalloc=$1 programs=$2 dir=$3 k n0 n1
  for k in 1000 0; do
    if ! "$lowalloc" run -q -o "$dir/loop$k.trace" -- "$programs/malloc_loop" "$k" 2>"$dir/run$k.err"; then
      fail "$lowalloc run -- malloc_loop $k failed: $(cat "$dir/run$k.err")"
      return
    fi
  done
  n1=$(allocations "$lowalloc" "$dir/loop1000.trace")
  n0=$(allocations "$lowalloc" "$dir/loop0.trace")
  if [ -z "$n1" ] || [ -z "$n0" ] || [ $((n1 - n0)) -ne 1000 ]; then
    fail "malloc_loop traced with $lowalloc: $n1 - $n0 allocations, expected a difference of 1000"
  else
    echo "$lowalloc traced malloc_loop: $n1 - $n0 = 1000 allocations"
  fi
}
