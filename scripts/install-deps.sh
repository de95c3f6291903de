#!/usr/bin/env bash
# Installs what tapegrad needs from Debian's packages. Usage: scripts/install-deps.sh [run|test|bench]
#   run   - build deps + the Fashion-MNIST data set (dataset-fashion-mnist) and the fortunes
#           texts the GPT example trains on (fortunes)
#   test  - build deps + clang and libFuzzer for scripts/fuzz.sh (default), libdnnl-dev (the
#           ASan build has TG_DNNL=ON: oneDNN's convolutions), python3-onnx and
#           libopencv-dnn-dev (tests/onnx: onnx.checker and OpenCV run the exported models),
#           PyTorch (python3-torch) for test_io_pt's round trip with real PyTorch
#   bench - build deps + LibTorch (libtorch-dev), libdnnl-dev and the data set, for benchmarks/
set -euo pipefail
what=${1:-test}
pkgs=(cmake make g++ pkg-config libxtensor-dev libxtensor-blas-dev xtl-dev libxsimd-dev
      libopenblas-dev libboost-test-dev zlib1g-dev
      pocl-opencl-icd libclblast-dev ocl-icd-opencl-dev opencl-headers  # OpenCL backend, run on PoCL
      libopenmpi-dev openmpi-bin)  # tg::distributed (docs/distributed.md)
case "$what" in
  run) pkgs+=(dataset-fashion-mnist fortunes) ;;
  bench) pkgs+=(dataset-fashion-mnist libtorch-dev gnuplot-nox libdnnl-dev) ;;  # DNNL=1 run.sh
  test) pkgs+=(clang-14 libclang-rt-14-dev  # scripts/fuzz.sh
             libdnnl-dev  # TG_DNNL=ON in scripts/test.sh's ASan build
             python3-onnx libopencv-dnn-dev  # onnx.checker and OpenCV DNN run exported models
             python3-torch) ;;  # test_io_pt: the .pt round trip with real PyTorch
  *) echo "usage: $0 [run|test|bench]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
