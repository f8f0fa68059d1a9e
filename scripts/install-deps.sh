#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages lowalloc's build, tests and benchmarks need.
# Usage: scripts/install-deps.sh [build|bench]   (bench adds the peer libraries)
# Run as root or with sudo; on other systems it prints what to install and exits non-zero.
set -euo pipefail

what=${1:-build}
# The tracer needs pkg-config, zstd and elfutils' libdw; its tests compare with libunwind and
# heaptrack (skipped where heaptrack is missing, but CI installs it). mimalloc and jemalloc are
# peers in the memory-resource benchmarks (loaded with dlopen, never linked).
# clang and libc++ build the test programs of `lowalloc advise` against libc++ as well.
packages=(cmake ninja-build g++ make libgtest-dev libgmock-dev libbenchmark-dev
          libboost-dev libabsl-dev llvm-14-dev
          pkg-config libzstd-dev libdw-dev libelf-dev libunwind-dev heaptrack
          libmimalloc-dev libjemalloc-dev clang-14 libc++1-14 libc++abi1-14)
# libc++'s headers: Debian 12's libc++-14-dev depends on libunwind-14-dev, which conflicts with
# libunwind-dev (the unwinder benchmark's peer), so the two -dev packages are unpacked here
# instead of installed (tests/trace/CMakeLists.txt looks for them here).
libcxx_headers=/opt/lowalloc/libc++-14
case "$what" in
  build|bench) ;;
  *) echo "usage: $0 [build|bench]" >&2; exit 64 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "lowalloc: not a Debian/Ubuntu system; please install: ${packages[*]}" >&2
  echo "(CMake >= 3.21, Ninja, a C++17 compiler, GoogleTest, Google Benchmark," >&2
  echo " zstd, elfutils libdw, libunwind, heaptrack," >&2
  echo " and for the benchmarks Boost, Abseil and LLVM 14 headers)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
have_libcxx_headers=0
[ -f "$libcxx_headers/usr/lib/llvm-14/include/c++/v1/vector" ] && have_libcxx_headers=1
[ ${#missing[@]} -eq 0 ] && [ $have_libcxx_headers -eq 1 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "lowalloc: run as root or install: ${missing[*]} (and libc++-14-dev's headers in $libcxx_headers)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -ne 0 ]; then
  echo "lowalloc: installing missing packages: ${missing[*]}"
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ $have_libcxx_headers -eq 0 ]; then
  echo "lowalloc: unpacking libc++-14-dev's headers into $libcxx_headers"
  tmp=$(mktemp -d)
  download() {
    (cd "$tmp" && "${sudo[@]}" apt-get download -qq -o APT::Sandbox::User=root \
       libc++-14-dev libc++abi-14-dev)
  }
  download || { "${sudo[@]}" apt-get update -qq && download; }
  "${sudo[@]}" mkdir -p "$libcxx_headers"
  for deb in "$tmp"/*.deb; do "${sudo[@]}" dpkg-deb -x "$deb" "$libcxx_headers"; done
  "${sudo[@]}" rm -rf "$tmp"
fi
