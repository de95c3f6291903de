#!/usr/bin/env bash
# Builds tapegrad and trains the Fashion-MNIST MLP on a fresh Debian machine:  bash scripts/run.sh
# With --cnn first, the convolutional network instead (examples/fashion_mnist_cnn.cpp):
#   bash scripts/run.sh --cnn
# With --gpt first, the character-level GPT on Debian's fortunes files (examples/char_gpt.cpp):
#   bash scripts/run.sh --gpt --minutes 10 --steps 400
# With --lstm first, the character-level LSTM on the same texts (examples/char_lstm.cpp):
#   bash scripts/run.sh --lstm --minutes 9 --steps 8000 --eval-every 200
# Further arguments go to the example (e.g. --epochs 5). Writes <example>.csv and .tgsv.
set -euo pipefail
cd "$(dirname "$0")/.."
example=fashion_mnist_mlp
if [ "${1:-}" = --cnn ]; then
  example=fashion_mnist_cnn
  shift
elif [ "${1:-}" = --gpt ]; then
  example=char_gpt
  shift
elif [ "${1:-}" = --lstm ]; then
  example=char_lstm
  shift
fi
bash scripts/install-deps.sh run
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release
cmake --build build/release -j"${TG_JOBS:-2}" --target "$example"
# Debian's OpenBLAS 0.3.21 does not recognise recent Intel CPUs and falls back to a kernel about
# 4x slower; tapegrad warns about it, and this picks the AVX-512 kernel where the CPU has it.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -q avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX; fi
exec "build/release/examples/$example" "$@"
