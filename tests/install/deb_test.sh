#!/usr/bin/env bash
# The Debian package: cpack builds it from this build; its Depends names the runtime libraries
# (libdw1, libzstd1, libdeflate0) and no -dev package; dpkg installs it into a scratch root (not the machine),
# DIR/usr/bin/lowalloc traces malloc_loop with the exact count, and dpkg removes it without
# leaving a file behind. Usage: deb_test.sh CPACK BUILD_DIR WORK_DIR PROGRAM_DIR
set -u
cpack=$1
build=$2
work=$3
programs=$4
. "$(dirname "$0")/common.sh"
failures=0

for tool in dpkg dpkg-deb dpkg-query; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "$tool is not installed (not a Debian system?): the .deb is not tested"
    exit 77
  fi
done
rm -rf "$work" && mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)

if ! "$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  exit 1
fi
deb=$(ls "$work"/out/lowalloc_*.deb 2>/dev/null | head -n 1)
if [ -z "$deb" ]; then
  cat "$work/cpack.log"
  echo "FAIL: cpack made no lowalloc_*.deb"
  exit 1
fi
echo "package: $deb"

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
case $depends in *-dev*) fail "Depends names a -dev package: $depends" ;; esac
for p in libdw1 libzstd1 libdeflate0 libc6 libstdc++6; do
  printf '%s\n' "$depends" | tr ',|' '\n\n' | sed -E 's/^ +//; s/ .*//' | grep -qxF "$p" ||
    fail "Depends does not name $p"
done

# A scratch root and its own dpkg database. The maintainer scripts (CPack's ldconfig call) run
# outside the root with a stand-in ldconfig, so nothing of the machine is touched.
root=$work/root
admin=$work/admin
mkdir -p "$root" "$admin/info" "$admin/updates" "$admin/triggers" "$work/bin"
touch "$admin/status" "$admin/available"
printf '#!/bin/sh\necho "ldconfig $*" >>"%s/ldconfig.log"\n' "$work" >"$work/bin/ldconfig"
chmod +x "$work/bin/ldconfig"
dpkg_root() {
  PATH="$work/bin:$PATH" dpkg --root="$root" --admindir="$admin" --log="$work/dpkg.log" \
    --force-not-root --force-script-chrootless --force-depends "$@"
}
if ! dpkg_root -i "$deb" >"$work/install.log" 2>&1; then
  cat "$work/install.log"
  echo "FAIL: dpkg -i $deb into $root"
  exit 1
fi
status=$(dpkg-query --admindir="$admin" -W -f='${Status}' lowalloc 2>&1)
[ "$status" = "install ok installed" ] || fail "dpkg-query says '$status' after dpkg -i"
for f in usr/bin/lowalloc usr/lib/lowalloc/liblowalloc_trace.so usr/share/man/man1/lowalloc.1 \
  usr/share/bash-completion/completions/lowalloc usr/share/doc/lowalloc/tracer.md \
  usr/include/lowalloc/small_vector.hpp usr/lib/cmake/lowalloc/lowalloc-config.cmake \
  usr/lib/pkgconfig/lowalloc.pc; do
  [ -f "$root/$f" ] || fail "the package did not install /$f"
done

check_traces_malloc_loop "$root/usr/bin/lowalloc" "$programs" "$work"

if ! dpkg_root --purge lowalloc >"$work/remove.log" 2>&1; then
  cat "$work/remove.log"
  fail "dpkg --purge lowalloc"
fi
status=$(dpkg-query --admindir="$admin" -W -f='${Status}' lowalloc 2>/dev/null)
case $status in "" | "unknown ok not-installed" | "purge ok not-installed") ;; *) fail "dpkg-query says '$status' after --purge" ;; esac
left=$(cd "$root" && find . ! -type d)
[ -z "$left" ] || fail "files left in the root after dpkg --purge: $left"
for f in $(dpkg-deb -c "$deb" | awk '{ print $NF }'); do
  [ -d "$root/$f" ] || [ ! -e "$root/$f" ] || fail "$f is still there after dpkg --purge"
done

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "the package installs, traces and removes cleanly"
