#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages lowalloc's build, tests and benchmarks need.
# Usage: scripts/install-deps.sh [build|bench]   (bench adds the peer libraries)
# Run as root or with sudo; on other systems it prints what to install and exits non-zero.
set -euo pipefail

what=${1:-build}
# The tracer needs pkg-config, zstd and elfutils' libdw; its tests compare with libunwind and
# heaptrack (skipped where heaptrack is missing, but CI installs it). mimalloc and jemalloc are
# peers in the memory-resource benchmarks (loaded with dlopen, never linked).
packages=(cmake ninja-build g++ make libgtest-dev libgmock-dev libbenchmark-dev
          libboost-dev libabsl-dev llvm-14-dev
          pkg-config libzstd-dev libdw-dev libelf-dev libunwind-dev heaptrack
          libmimalloc-dev libjemalloc-dev)
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
[ ${#missing[@]} -eq 0 ] && exit 0

echo "lowalloc: installing missing packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "lowalloc: run as root or install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
