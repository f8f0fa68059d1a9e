#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages lowalloc needs, by level; each level adds to the one before:
#   demo     the tool and the examples: `make demo`, `make package` (compiler, CMake, Ninja,
#            pkg-config, zstd, zlib, libdeflate and elfutils' libdw headers)
#   test     `make test`: GoogleTest, Google Benchmark (the release preset builds the
#            benchmarks), libunwind and heaptrack (the tracer's peers), clang 14 and libc++ (the
#            libc++ test programs; libc++'s headers are unpacked), gdb, lldb and python3 (the
#            debugger tests, the tables of `make bench`), groff (the man page test), dpkg-dev
#            and file (the .deb test), chromium (the HTML report is tested in a headless
#            browser), golang-go (`go tool pprof` reads the pprof export) and python3-jsonschema
#            (the speedscope export is checked against speedscope's schema)
#   bench    `make bench`: the peer libraries of the benchmarks (Boost, Abseil, LLVM 14,
#            mimalloc, jemalloc)
#   package  `make package`: demo, and dpkg-dev and file for the .deb's Depends
# Usage: scripts/install-deps.sh [demo|test|bench|package]   (default demo; `build` is demo)
#        scripts/install-deps.sh --list LEVEL                 (print the packages, install nothing)
# Run as root or with sudo; on other systems it prints what to install and exits non-zero.
# Another apt or dpkg running (unattended-upgrades, a second shell) is waited for, up to
# LOWALLOC_APT_LOCK_TIMEOUT seconds (default 600), instead of failing at once.
set -euo pipefail

list_only=0
if [ "${1:-}" = "--list" ]; then
  list_only=1
  shift
fi
what=${1:-demo}
[ "$what" = build ] && what=demo # the name of the first level before it was split

demo_packages=(g++ make cmake ninja-build pkg-config libzstd-dev zlib1g-dev libdeflate-dev libdw-dev
               libelf-dev)
# clang and libc++ build the test programs of `lowalloc advise` against libc++ as well.
test_packages=(libgtest-dev libgmock-dev libbenchmark-dev libunwind-dev heaptrack
               clang-14 libc++1-14 libc++abi1-14 gdb lldb-14 python3-lldb-14 python3 groff-base
               dpkg-dev file
               chromium golang-go python3-jsonschema)
# mimalloc and jemalloc are peers in the memory-resource benchmarks (loaded with dlopen, never
# linked); Boost, Abseil and LLVM in the container benchmarks.
bench_packages=(libboost-dev libabsl-dev llvm-14-dev libmimalloc-dev libjemalloc-dev)
package_packages=(dpkg-dev file)
case "$what" in
  demo) packages=("${demo_packages[@]}") ;;
  test) packages=("${demo_packages[@]}" "${test_packages[@]}") ;;
  bench) packages=("${demo_packages[@]}" "${test_packages[@]}" "${bench_packages[@]}") ;;
  package) packages=("${demo_packages[@]}" "${package_packages[@]}") ;;
  *) echo "usage: $0 [--list] [demo|test|bench|package]" >&2; exit 64 ;;
esac
# libc++'s headers, for `test` and `bench`: Debian 12's libc++-14-dev depends on
# libunwind-14-dev, which conflicts with libunwind-dev (the unwinder benchmark's peer), so the two
# -dev packages are unpacked here instead of installed (tests/trace/CMakeLists.txt looks for them
# here).
libcxx_headers=${LOWALLOC_LIBCXX_PREFIX:-/opt/lowalloc/libc++-14}
want_libcxx_headers=0
case "$what" in test | bench) want_libcxx_headers=1 ;; esac

if [ $list_only -eq 1 ]; then
  echo "${packages[*]}"
  exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "lowalloc: not a Debian/Ubuntu system; please install: ${packages[*]}" >&2
  echo "(CMake >= 3.21, Ninja, a C++17 compiler, pkg-config, zstd, zlib and elfutils libdw;" >&2
  echo " for the tests GoogleTest, Google Benchmark, libunwind, heaptrack, clang and libc++," >&2
  echo " for the benchmarks Boost, Abseil, LLVM 14, mimalloc and jemalloc)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
have_libcxx_headers=1
if [ $want_libcxx_headers -eq 1 ] && [ ! -f "$libcxx_headers/usr/lib/llvm-14/include/c++/v1/vector" ]; then
  have_libcxx_headers=0
fi
[ ${#missing[@]} -eq 0 ] && [ $have_libcxx_headers -eq 1 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "lowalloc: run as root or install: ${missing[*]}" >&2
  [ $have_libcxx_headers -eq 1 ] || echo "(and libc++-14-dev's headers in $libcxx_headers)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
lock_timeout=${LOWALLOC_APT_LOCK_TIMEOUT:-600}
# apt-get install waits for dpkg's lock itself (DPkg::Lock::Timeout); `apt-get update` does not
# wait for the lists' lock, so it is tried again while another apt holds it.
apt=("${sudo[@]}" apt-get -o "DPkg::Lock::Timeout=$lock_timeout")
apt_update() {
  local waited=0 out
  while :; do
    if out=$("${apt[@]}" update -qq 2>&1); then
      [ -z "$out" ] || printf '%s\n' "$out"
      return 0
    fi
    case $out in
      *"Could not get lock"* | *"Unable to lock"*)
        if [ $waited -ge "$lock_timeout" ]; then
          printf '%s\n' "$out" >&2
          echo "lowalloc: another apt still holds its lock after ${lock_timeout} s" >&2
          return 1
        fi
        [ $waited -gt 0 ] || echo "lowalloc: waiting for another apt to finish..."
        sleep 5
        waited=$((waited + 5))
        ;;
      *)
        printf '%s\n' "$out" >&2
        return 1
        ;;
    esac
  done
}

if [ ${#missing[@]} -ne 0 ]; then
  echo "lowalloc: installing missing packages ($what): ${missing[*]}"
  apt_update
  "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ $have_libcxx_headers -eq 0 ]; then
  echo "lowalloc: unpacking libc++-14-dev's headers into $libcxx_headers"
  tmp=$(mktemp -d)
  download() {
    (cd "$tmp" && "${apt[@]}" download -qq -o APT::Sandbox::User=root \
       libc++-14-dev libc++abi-14-dev)
  }
  download || { apt_update && download; }
  "${sudo[@]}" mkdir -p "$libcxx_headers"
  for deb in "$tmp"/*.deb; do "${sudo[@]}" dpkg-deb -x "$deb" "$libcxx_headers"; done
  "${sudo[@]}" rm -rf "$tmp"
fi
