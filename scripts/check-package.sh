#!/usr/bin/env bash
# Checks that tapegrad installs as a library other projects can use: builds and runs the
# out-of-tree consumer in tests/consumer/ (a tensor, backward, a gradient) against
#   1. a static install of build/release (scripts/test.sh builds it): find_package and
#      pkg-config --static;
#   2. a shared install of build/shared (library only, built here): checks with nm that only the
#      public API is exported, then find_package and pkg-config;
#   3. the Debian package: build/deb (static, TG_CUDA=OFF: see cmake/package.cmake) through
#      cpack -G DEB, dpkg -i, the consumer with no prefix hints (find_package and pkg-config),
#      dpkg -r. This replaces, then removes, any libtapegrad-dev already installed.
# Run it after scripts/test.sh, which calls it (dpkg needs root or sudo):
#   bash scripts/check-package.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TG_JOBS:-2}
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
work=$(mktemp -d "${TMPDIR:-/tmp}/tapegrad-package.XXXXXX")
deb_installed=0
cleanup() {
  if [ "$deb_installed" = 1 ]; then $SUDO dpkg -r libtapegrad-dev >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
start=$SECONDS
step() { echo "== check-package [$((SECONDS - start)) s]: $*"; }
# Runs a command with its output in a log, shown only when it fails.
quiet() {
  local log=$work/log.txt
  if ! "$@" >"$log" 2>&1; then cat "$log"; echo "check-package: failed: $*" >&2; exit 1; fi
}
fail() { echo "check-package: $*" >&2; exit 1; }

# The consumer through find_package(tapegrad): configure, build, run. $1 names the build, $2 is
# the tapegradConfig.cmake directory it must find, the rest are extra cmake arguments.
consumer_cmake() {
  local name=$1 want=$2; shift 2
  local dir=$work/consumer-$name
  quiet cmake -S tests/consumer -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@"
  local found
  found=$(sed -n 's/^tapegrad_DIR:PATH=//p' "$dir/CMakeCache.txt")
  [ "$(realpath "$found")" = "$(realpath "$want")" ] ||
    fail "$name: found tapegrad in $found, not $want"
  quiet cmake --build "$dir"
  "$dir/consumer"
}
# The consumer through pkg-config: $1 names it, the rest are pkg-config options (--static).
consumer_pkgconfig() {
  local name=$1; shift
  local flags rpath=()
  flags="$(pkg-config --cflags tapegrad) $(pkg-config "$@" --libs tapegrad)"
  echo "   $(pkg-config --variable=pcfiledir tapegrad)/tapegrad.pc: c++ main.cpp $flags"
  # A shared libtapegrad.so in a prefix the loader does not search: run it from there.
  [ "${1:-}" = --static ] || rpath=("-Wl,-rpath,$(pkg-config --variable=libdir tapegrad)")
  # shellcheck disable=SC2086  # the flags are words
  quiet c++ -std=c++17 tests/consumer/main.cpp -o "$work/pc-$name" $flags "${rpath[@]}"
  "$work/pc-$name"
}

# 1. Static library: the release tree of scripts/test.sh.
[ -f build/release/CMakeCache.txt ] || fail "no build/release: run scripts/test.sh first"
step "static: install build/release"
quiet cmake --build build/release -j"$jobs" --target tapegrad
quiet cmake --install build/release --prefix "$work/static"
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' build/release/CMakeCache.txt)
step "static: consumer with find_package"
consumer_cmake static "$work/static/$libdir/cmake/tapegrad" -DCMAKE_PREFIX_PATH="$work/static"
step "static: consumer with pkg-config --static"
PKG_CONFIG_PATH=$work/static/$libdir/pkgconfig consumer_pkgconfig static --static

# 2. Shared library, library only.
step "shared: build libtapegrad.so"
quiet cmake -S . -B build/shared -DCMAKE_BUILD_TYPE=Release -DTG_WERROR=ON \
  -DBUILD_SHARED_LIBS=ON -DTG_TESTS=OFF -DTG_EXAMPLES=OFF
quiet cmake --build build/shared -j"$jobs"
so=build/shared/libtapegrad.so
exported=$(nm -DC --defined-only "$so")
internal_ns='tg::(backend|runtime|checkpointing|detail|autograd::detail|io_detail)::'
internal=$(grep -E "$internal_ns" <<<"$exported" || true)
[ -z "$internal" ] || fail "libtapegrad.so exports internal symbols:"$'\n'"$internal"
grep -q ' tg::Tensor::backward(' <<<"$exported" || fail "libtapegrad.so lacks tg::Tensor::backward"
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
echo "   SONAME $soname, $(wc -l <<<"$exported") exported symbols, none internal"
quiet cmake --install build/shared --prefix "$work/shared"
step "shared: consumer with find_package"
consumer_cmake shared "$work/shared/$libdir/cmake/tapegrad" -DCMAKE_PREFIX_PATH="$work/shared"
readelf -d "$work/consumer-shared/consumer" | grep 'NEEDED.*libtapegrad\.so' >/dev/null ||
  fail "the shared consumer does not load libtapegrad.so"
step "shared: consumer with pkg-config"
PKG_CONFIG_PATH=$work/shared/$libdir/pkgconfig consumer_pkgconfig shared

# 3. Debian package, from a static build without CUDA, used with no hints at all.
unset CMAKE_PREFIX_PATH PKG_CONFIG_PATH
step "deb: build"
quiet cmake -S . -B build/deb -DCMAKE_BUILD_TYPE=Release -DTG_WERROR=ON -DTG_TESTS=OFF \
  -DTG_EXAMPLES=OFF -DTG_CUDA=OFF -DCMAKE_INSTALL_PREFIX=/usr
quiet cmake --build build/deb -j"$jobs"
quiet cpack -G DEB --config build/deb/CPackConfig.cmake -B "$work/deb"
deb=$(echo "$work"/deb/libtapegrad-dev_*.deb)
[ -f "$deb" ] || fail "cpack made no libtapegrad-dev_*.deb"
dpkg-deb -f "$deb" Package Version Architecture Depends | sed 's/^/   /'
step "deb: dpkg -i $(basename "$deb")"
deb_installed=1
quiet $SUDO dpkg -i "$deb"
debdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' build/deb/CMakeCache.txt)
step "deb: consumer with find_package"
consumer_cmake deb "/usr/$debdir/cmake/tapegrad"
step "deb: consumer with pkg-config --static"
consumer_pkgconfig deb --static
step "deb: dpkg -r libtapegrad-dev"
quiet $SUDO dpkg -r libtapegrad-dev
deb_installed=0
[ ! -e "/usr/$debdir/cmake/tapegrad" ] || fail "dpkg -r left /usr/$debdir/cmake/tapegrad"
step "all passed"
