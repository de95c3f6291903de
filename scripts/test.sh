#!/usr/bin/env bash
# Builds tapegrad and runs its tests on a fresh Debian machine:  bash scripts/test.sh
# Then checks the installed library with scripts/check-package.sh unless TG_SKIP_PACKAGE=1,
# builds and runs the tests under AddressSanitizer + UndefinedBehaviorSanitizer unless
# TG_SKIP_SANITIZE=1, the threaded suites under ThreadSanitizer (scripts/tsan.sh) unless
# TG_SKIP_TSAN=1, then fuzzes the file readers (scripts/fuzz.sh) unless TG_SKIP_FUZZ=1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh test
jobs=${TG_JOBS:-2}
export OPENBLAS_NUM_THREADS=1
# LibTorch's headers, for the check of tests/nn_coverage's lists of torch::nn (issue 30): Debian's
# libtorch-dev unpacked (2 MB), not installed (it would pull in 500 MB of LibTorch's runtime,
# which no test uses). Where it cannot be fetched the check says so and is skipped.
nn_headers=/usr/include/torch/csrc/api/include/torch/nn
if [ ! -d "$nn_headers" ]; then
  mkdir -p build/libtorch-headers
  if (cd build/libtorch-headers && { ls libtorch-dev_*.deb >/dev/null 2>&1 || apt-get download libtorch-dev; } &&
      dpkg-deb -x libtorch-dev_*.deb .) 2>/dev/null; then
    nn_headers=$PWD/build/libtorch-headers/usr/include/torch/csrc/api/include/torch/nn
  else
    echo "test.sh: could not fetch libtorch-dev's headers; nn_coverage_lists_current will be skipped"
  fi
fi
export TG_LIBTORCH_NN=$nn_headers
# install-deps.sh installed python3-torch: test_io_pt's PyTorch round trip must run, not skip
export TG_REQUIRE_PYTORCH=1
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DTG_WERROR=ON
cmake --build build/release -j"$jobs"
ctest --test-dir build/release --output-on-failure -j"$jobs"
# Installing: find_package, pkg-config and the .deb, with an out-of-tree consumer (about 2 min).
if [ "${TG_SKIP_PACKAGE:-0}" != 1 ]; then
  bash scripts/check-package.sh
fi
if [ "${TG_SKIP_SANITIZE:-0}" != 1 ]; then
  # -O1 -g1 (line tables: the sanitizers' stack traces keep file:line) builds in about half the
  # time of RelWithDebInfo's -O2 -g (the largest test file: 47 s of CPU instead of 102 s), and
  # the build is most of this stage.
  # With the oneDNN convolutions (TG_DNNL, off in the release build): CI runs that path here,
  # without a build of its own.
  cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_SANITIZE=ON -DTG_EXAMPLES=OFF \
    -DTG_OPENCL=OFF -DTG_CUDA=OFF -DTG_DNNL=ON -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
  cmake --build build/asan -j"$jobs"
  # The device suites run once, in the release build: PoCL's LLVM JIT is not built for ASan.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build/asan --output-on-failure -j"$jobs" -LE "opencl|cuda"
fi
# Threads under ThreadSanitizer (about 3 min).
if [ "${TG_SKIP_TSAN:-0}" != 1 ]; then
  bash scripts/tsan.sh
fi
# libFuzzer on the IDX, model, optimizer, safetensors and .pt readers, 33 s each, two at a time
# (about 3.5 min).
if [ "${TG_SKIP_FUZZ:-0}" != 1 ]; then
  bash scripts/fuzz.sh
fi
