#!/usr/bin/env bash
# scripts/install-deps.sh with stand-ins for apt-get, dpkg-query, dpkg-deb, sudo, id and sleep on
# PATH: which packages each level asks apt-get for (demo has no GoogleTest, Boost, Abseil or LLVM;
# test adds the test tools and unpacks libc++'s headers; bench adds the peers), nothing when all
# is there, DPkg::Lock::Timeout on every apt-get call, `apt-get update` tried again while another
# apt holds the lists' lock, and given up after LOWALLOC_APT_LOCK_TIMEOUT.
# Usage: install_deps_test.sh SCRIPT WORK_DIR
set -u
script=$1
work=$2
rm -rf "$work" && mkdir -p "$work/bin" || exit 1
work=$(cd "$work" && pwd)
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

fake() {
  printf '#!/bin/sh\n%s\n' "$2" >"$work/bin/$1"
  chmod +x "$work/bin/$1"
}
# apt-get: logged; `update` fails with apt's lock message while $work/locks counts down; download
# makes empty .deb files.
fake apt-get 'echo "apt-get $*" >>"$FAKE_LOG"
case " $* " in
  *" update "*)
    n=$(cat "$FAKE_DIR/locks" 2>/dev/null || echo 0)
    if [ "$n" -gt 0 ]; then
      echo $((n - 1)) >"$FAKE_DIR/locks"
      echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 1 (apt-get)" >&2
      echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
      exit 100
    fi ;;
  *" download "*) touch libc++-14-dev_14_amd64.deb libc++abi-14-dev_14_amd64.deb ;;
esac
exit 0'
fake dpkg-query 'for p in $FAKE_INSTALLED; do [ "$p" = "$3" ] && { echo "install ok installed"; exit 0; }; done
exit 1'
fake dpkg-deb 'echo "dpkg-deb $*" >>"$FAKE_LOG"; mkdir -p "$3/usr/lib/llvm-14/include/c++/v1" && touch "$3/usr/lib/llvm-14/include/c++/v1/vector"'
fake sudo 'echo "sudo $1" >>"$FAKE_LOG"; exec "$@"'
fake id 'echo 1000'
fake sleep 'exit 0'
export FAKE_DIR=$work FAKE_LOG=$work/log FAKE_INSTALLED=""

# run LEVEL [ENV...]: the script with the stand-ins, a fresh log, the libc++ headers in $work.
run() {
  local level=$1
  shift
  rm -rf "$work/log" "$work/libcxx"
  : >"$work/log"
  env PATH="$work/bin:$PATH" LOWALLOC_LIBCXX_PREFIX="$work/libcxx" "$@" \
    bash "$script" "$level" >"$work/out" 2>&1
}
# The packages of the `apt-get install` call in the log.
installed() {
  sed -n 's/.* install -y -qq --no-install-recommends //p' "$work/log" | tr ' ' '\n' | sort | tr '\n' ' '
}
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }

demo_list="cmake g++ libdeflate-dev libdw-dev libelf-dev libzstd-dev make ninja-build pkg-config zlib1g-dev "
for level in demo build; do
  run "$level" || fail "$level: exit status $? ($(cat "$work/out"))"
  [ "$(installed)" = "$demo_list" ] || fail "$level installs '$(installed)', expected '$demo_list'"
  grep -q "^apt-get -o DPkg::Lock::Timeout=600 update" "$work/log" || fail "$level: no apt-get update"
  grep -q "^apt-get -o DPkg::Lock::Timeout=600 install" "$work/log" ||
    fail "$level: apt-get install without DPkg::Lock::Timeout: $(cat "$work/log")"
  grep -q "^sudo apt-get" "$work/log" || fail "$level: not through sudo (not root)"
  ! grep -q "download\|dpkg-deb" "$work/log" || fail "$level unpacks libc++'s headers"
done
[ "$(bash "$script" --list demo | tr ' ' '\n' | sort | tr '\n' ' ')" = "$demo_list" ] ||
  fail "--list demo: $(bash "$script" --list demo)"

run test || fail "test: exit status $? ($(cat "$work/out"))"
pkgs=$(installed)
for p in $demo_list libgtest-dev libgmock-dev libbenchmark-dev libunwind-dev heaptrack clang-14 \
  libc++1-14 libc++abi1-14 gdb lldb-14 python3-lldb-14 python3 groff-base dpkg-dev file chromium \
  golang-go python3-jsonschema; do
  has "$pkgs" "$p" || fail "test does not install $p"
done
for p in libboost-dev libabsl-dev llvm-14-dev libmimalloc-dev libjemalloc-dev; do
  has "$pkgs" "$p" && fail "test installs $p (a bench peer)"
done
grep -q "download -qq -o APT::Sandbox::User=root libc++-14-dev libc++abi-14-dev" "$work/log" ||
  fail "test does not download libc++'s headers"
[ -f "$work/libcxx/usr/lib/llvm-14/include/c++/v1/vector" ] || fail "test did not unpack libc++'s headers"

run bench || fail "bench: exit status $? ($(cat "$work/out"))"
pkgs=$(installed)
for p in libgtest-dev libboost-dev libabsl-dev llvm-14-dev libmimalloc-dev libjemalloc-dev; do
  has "$pkgs" "$p" || fail "bench does not install $p"
done

run package || fail "package: exit status $? ($(cat "$work/out"))"
[ "$(installed)" = "$(echo $demo_list dpkg-dev file | tr ' ' '\n' | sort | tr '\n' ' ')" ] ||
  fail "package installs '$(installed)'"

# Everything there already: no apt-get at all.
run demo FAKE_INSTALLED="$demo_list" || fail "demo with everything installed: exit status $?"
[ ! -s "$work/log" ] || fail "demo with everything installed calls: $(cat "$work/log")"

# Another apt holds the lists' lock twice, then lets go: waited for, then installed.
echo 2 >"$work/locks"
run demo || fail "demo with the lock held twice: exit status $? ($(cat "$work/out"))"
[ "$(grep -c " update" "$work/log")" -eq 3 ] || fail "apt-get update was not tried 3 times: $(cat "$work/log")"
grep -q "waiting for another apt" "$work/out" || fail "no word of the wait: $(cat "$work/out")"
[ "$(installed)" = "$demo_list" ] || fail "demo after the wait installs '$(installed)'"
# ... and never lets go: given up after LOWALLOC_APT_LOCK_TIMEOUT seconds (5 s a try).
echo 1000 >"$work/locks"
run demo LOWALLOC_APT_LOCK_TIMEOUT=10 && fail "demo with the lock held for good succeeded"
grep -q "another apt still holds its lock after 10 s" "$work/out" || fail "no word of the timeout: $(cat "$work/out")"
[ "$(grep -c " update" "$work/log")" -eq 3 ] || fail "not 3 tries in 10 s: $(cat "$work/log")"
! grep -q " install " "$work/log" || fail "installed without apt-get update"
rm -f "$work/locks"

run bogus
[ $? -eq 64 ] || fail "an unknown level does not exit with 64"

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "each level asks for its own packages and waits for the apt lock"
