#!/usr/bin/env bash
# An install is relocatable: `cmake --install` into a scratch prefix, the prefix moved elsewhere,
# and the moved command traces a program with its own recorder (exact allocation count); the
# command copied alone finds no recorder (no build path compiled in to fall back on); the
# pkg-config files of the moved prefix give its paths and build a program with alloc_count; the
# man page, the bash completion and the docs are installed.
# Usage: relocated_test.sh BUILD_DIR WORK_DIR PROGRAM_DIR CXX CONSUMER_MAIN
set -u
build=$1
work=$2
programs=$3
cxx=$4
consumer_main=$5
. "$(dirname "$0")/common.sh"
failures=0
rm -rf "$work" && mkdir -p "$work" || exit 1

if ! cmake --install "$build" --prefix "$work/first" >"$work/install.log" 2>&1; then
  cat "$work/install.log"
  exit 1
fi
mv "$work/first" "$work/moved"
prefix=$work/moved

for f in bin/lowalloc lib/lowalloc/liblowalloc_trace.so lib/liblowalloc_alloc_count.a \
  lib/pkgconfig/lowalloc.pc lib/pkgconfig/lowalloc-alloc-count.pc share/man/man1/lowalloc.1 \
  share/bash-completion/completions/lowalloc share/doc/lowalloc/README.md \
  share/doc/lowalloc/tracer.md include/lowalloc/small_vector.hpp lib/cmake/lowalloc/lowalloc-config.cmake; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done

# The moved command, with its own recorder.
check_traces_malloc_loop "$prefix/bin/lowalloc" "$programs" "$work"

# Copied alone: no recorder beside it, and none compiled in to fall back on.
mkdir -p "$work/alone/bin"
cp "$prefix/bin/lowalloc" "$work/alone/bin/"
"$work/alone/bin/lowalloc" run -q -o "$work/alone.trace" -- "$programs/malloc_loop" 10 \
  >/dev/null 2>"$work/alone.err"
status=$?
[ $status -eq 125 ] || fail "the command copied alone exited with $status, expected 125"
grep -q "cannot find liblowalloc_trace.so" "$work/alone.err" ||
  fail "the command copied alone did not say it has no recorder: $(cat "$work/alone.err")"
[ ! -e "$work/alone.trace" ] || fail "the command copied alone wrote a trace"

# pkg-config, from the moved prefix.
if command -v pkg-config >/dev/null 2>&1; then
  export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
  [ "lowalloc $(pkg-config --modversion lowalloc)" = "$("$prefix/bin/lowalloc" --version)" ] ||
    fail "pkg-config --modversion lowalloc: $(pkg-config --modversion lowalloc 2>&1)"
  include=$(pkg-config --variable=includedir lowalloc)
  [ -f "$include/lowalloc/small_vector.hpp" ] || fail "pkg-config's includedir $include has no headers"
  case $(pkg-config --libs lowalloc) in
    *-l*) fail "lowalloc.pc links a library: $(pkg-config --libs lowalloc)" ;;
  esac
  # shellcheck disable=SC2046
  if ! "$cxx" -std=c++17 $(pkg-config --cflags lowalloc-alloc-count) "$consumer_main" \
    -o "$work/consumer" $(pkg-config --libs lowalloc-alloc-count) 2>"$work/consumer.err"; then
    fail "the consumer does not build with pkg-config lowalloc-alloc-count: $(cat "$work/consumer.err")"
  elif ! "$work/consumer"; then
    fail "the consumer built with pkg-config failed"
  fi
else
  echo "pkg-config is not installed: the .pc files are not checked"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "the moved install traces with its own recorder"
