#!/bin/sh
# Writes the lists of LibTorch's torch::nn modules and torch::nn::functional functions, as
# tests/test_nn_coverage.cpp reads them (tests/nn_coverage/*.def), from LibTorch's installed
# headers (Debian's libtorch-dev: 1.13). Usage:
#   scripts/libtorch-nn-list.sh [--check] [headers]
# headers defaults to $TG_LIBTORCH_NN, else /usr/include/torch/csrc/api/include/torch/nn
# (scripts/test.sh sets TG_LIBTORCH_NN to libtorch-dev's headers unpacked without installing
# the package, so CI checks the lists against LibTorch's own headers). With --check it writes
# nothing and exits 1 if the committed lists differ from the headers' (0 if they agree, 77 if
# the headers are not installed: CTest's "skipped").
# - modules: every TORCH_MODULE(Name) that starts a line in modules/ (126 in 1.13; the comments'
#   TORCH_MODULE(M) examples do not count);
# - functions: every function of torch::nn::functional defined in functional/*.h outside the
#   `namespace detail` blocks, whose names do not start with '_' (105 in 1.13;
#   _smooth_l1_loss is an internal helper there).
set -eu
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
nn=${1:-${TG_LIBTORCH_NN:-/usr/include/torch/csrc/api/include/torch/nn}}
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/tests/nn_coverage
if [ ! -d "$nn/modules" ] || [ ! -d "$nn/functional" ]; then
  echo "libtorch-nn-list: no LibTorch headers under $nn (install libtorch-dev); lists not checked"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "// LibTorch's torch::nn modules, from its headers by scripts/libtorch-nn-list.sh: do not edit."
  grep -rh '^TORCH_MODULE(' "$nn/modules" | sed 's/^TORCH_MODULE(\([A-Za-z0-9_]*\)).*/\1/' |
    LC_ALL=C sort -u | sed 's/.*/TG_NN_MODULE(&)/'
} > "$tmp/modules.def"
{
  echo "// LibTorch's torch::nn::functional functions, from its headers by scripts/libtorch-nn-list.sh: do not edit."
  for f in "$nn"/functional/*.h; do
    awk '/namespace detail \{/ { d = 1 } /\} \/\/ namespace detail/ { d = 0; next } !d' "$f"
  done | grep -oE '^(inline )?[A-Za-z_:<>, ]*(Tensor|std::tuple<[^>]*>|void) +[a-z_0-9]+\(' |
    sed -E 's/.* ([a-z_0-9]+)\($/\1/' | grep -v '^_' | LC_ALL=C sort -u | sed 's/.*/TG_NN_FUNCTION(&)/'
} > "$tmp/functional.def"
if [ $check = 1 ]; then
  status=0
  for l in modules functional; do
    if ! cmp -s "$tmp/$l.def" "$out/$l.def"; then
      echo "libtorch-nn-list: tests/nn_coverage/$l.def is not what $nn holds:"
      diff "$out/$l.def" "$tmp/$l.def" || true
      status=1
    fi
  done
  [ $status = 0 ] && echo "libtorch-nn-list: tests/nn_coverage/*.def match $nn ($(grep -c TG_NN_MODULE "$out/modules.def") modules, $(grep -c TG_NN_FUNCTION "$out/functional.def") functions)"
  exit $status
fi
mkdir -p "$out"
cp "$tmp/modules.def" "$tmp/functional.def" "$out/"
echo "libtorch-nn-list: wrote $(grep -c TG_NN_MODULE "$out/modules.def") modules and $(grep -c TG_NN_FUNCTION "$out/functional.def") functions to tests/nn_coverage/"
