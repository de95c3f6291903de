#!/usr/bin/env bash
# Records what LibTorch prints for each program in tests/ported/: builds it against Debian's
# libtorch-dev (LibTorch 1.13; scripts/install-deps.sh bench installs it), runs it and writes
# tests/ported/<name>.expected, which tests/test_ported.cpp compares the tapegrad port with.
# Usage: scripts/record-ported.sh [NAME...]   (default: every tests/ported/*.cpp)
set -euo pipefail
cd "$(dirname "$0")/.."
inc=/usr/include/torch/csrc/api/include
[ -d "$inc" ] || { echo "record-ported: LibTorch headers not found ($inc): apt-get install libtorch-dev" >&2; exit 2; }
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in tests/ported/*.cpp; do names+=("$(basename "$f" .cpp)"); done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in "${names[@]}"; do
  src=tests/ported/$n.cpp
  [ -f "$src" ] || { echo "record-ported: no $src" >&2; exit 2; }
  g++ -std=c++17 -O1 "$src" -o "$work/$n" -I"$inc" -ltorch -ltorch_cpu -lc10
  # one thread, as the tests run: LibTorch's reductions then sum in one order
  (cd "$work" && OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "./$n") > "tests/ported/$n.expected"
  echo "recorded tests/ported/$n.expected ($(wc -l < "tests/ported/$n.expected") lines)"
done
