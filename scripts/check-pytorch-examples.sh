#!/usr/bin/env bash
# Ports pytorch/examples' cpp/dcgan and cpp/custom-dataset with scripts/port-from-libtorch.sh
# alone, builds each both against LibTorch (Debian's libtorch-dev) and against tapegrad, runs
# both on the same small data, and prints the two outputs side by side with the largest
# relative difference of their numbers. Their code is not part of this repository (third-party):
# give the path of a checkout of github.com/pytorch/examples.
#   Usage: scripts/check-pytorch-examples.sh EXAMPLES_CHECKOUT [BUILD_DIR]
# Needs libtorch-dev, libopencv-dev and dataset-fashion-mnist (as MNIST-format files), and a
# configured tapegrad build (default build/release), which it installs into a temporary prefix.
# dcgan trains on Fashion-MNIST (LibTorch's MNIST reader wants all 60,000 training images) and is
# stopped after its first 20 steps (its log lines at steps 10 and 20); custom-dataset trains its 10 iterations on one generated JPEG image and tests on
# another (the example shuffles its file list with std::random_device, and its dropout masks
# follow the order of a batch: with one image the two runs see the same batches).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
examples=${1:?usage: $0 EXAMPLES_CHECKOUT [BUILD_DIR]}
build=${2:-$here/build/release}
for f in cpp/dcgan/dcgan.cpp cpp/custom-dataset/custom-dataset.cpp; do
  [ -f "$examples/$f" ] || { echo "check-pytorch-examples: no $examples/$f" >&2; exit 2; }
done
inc=/usr/include/torch/csrc/api/include
[ -d "$inc" ] || { echo "check-pytorch-examples: apt-get install libtorch-dev" >&2; exit 2; }
pkg-config --exists opencv4 || { echo "check-pytorch-examples: apt-get install libopencv-dev" >&2; exit 2; }
mnist=/usr/share/datasets/fashion-mnist
[ -f "$mnist/train-images-idx3-ubyte.gz" ] || { echo "check-pytorch-examples: apt-get install dataset-fashion-mnist" >&2; exit 2; }

work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
echo "== installing tapegrad from $build into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
tg_flags=$(pkg-config --cflags --libs --static tapegrad)
cv_flags=$(pkg-config --cflags --libs opencv4)
stand_ins=$here/scripts/pytorch-examples   # argparse, which Debian does not package

# the data: Fashion-MNIST's training files, uncompressed (as LibTorch's reader wants them); 16
# generated JPEGs
mkdir -p "$work/data"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte; do gunzip -c "$mnist/$f.gz" > "$work/data/$f"; done
cat > "$work/make_images.cpp" <<'CPP'
#include <opencv2/opencv.hpp>
#include <cmath>
#include <fstream>
#include <string>
int main() {
    std::ofstream info("info.txt");
    for (int i = 0; i < 2; ++i) {
        cv::Mat img(64 + 8 * i, 80, CV_8UC3);
        for (int y = 0; y < img.rows; ++y)
            for (int x = 0; x < img.cols; ++x)
                img.at<cv::Vec3b>(y, x) = cv::Vec3b(uchar((x * 3 + i * 17) % 256),
                    uchar((y * 5 + i * 29) % 256), uchar(127 + 120 * std::sin(0.1 * (x + y + i))));
        const std::string dir = "class" + std::to_string(i % 4), name = "image_" + std::to_string(i) + ".jpg";
        cv::imwrite("dataset/" + dir + "/" + name, img);
        info << (i ? "\n" : "") << dir << "/" << name << " " << i % 4 << " " << (i < 1 ? "train" : "test");
    }
}
CPP
mkdir -p "$work/images/dataset"/class{0,1,2,3}
g++ -std=c++17 -O1 "$work/make_images.cpp" -o "$work/make_images" $cv_flags
(cd "$work/images" && "$work/make_images")

run_pair() {  # name source extra-flags lines-to-wait-for (0: run to the end) run-args...
  local name=$1 src=$2 extra=$3 lines=$4; shift 4
  mkdir -p "$work/$name/torch" "$work/$name/tg"
  cp "$src" "$work/$name/torch/$name.cpp"
  cp "$src" "$work/$name/tg/$name.cpp"
  bash "$here/scripts/port-from-libtorch.sh" "$work/$name/tg/$name.cpp"
  echo "== $name: building against LibTorch and, after the script alone, against tapegrad"
  # shellcheck disable=SC2086
  g++ -std=c++17 -O2 -w "$work/$name/torch/$name.cpp" -o "$work/$name/torch/prog" -I"$stand_ins" \
      -I"$inc" -ltorch -ltorch_cpu -lc10 $extra
  # shellcheck disable=SC2086
  g++ -std=c++17 -O2 "$work/$name/tg/$name.cpp" -o "$work/$name/tg/prog" -I"$stand_ins" $tg_flags $extra
  for side in torch tg; do
    local dir=$work/$name/$side
    (cd "$dir" && ln -sfn "$work/data" data && cp -r "$work/images/dataset" "$work/images/info.txt" .)
    (cd "$dir" && exec env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 stdbuf -oL ./prog "$@" > out.txt 2> err.txt) &
    local pid=$!
    if [ "$lines" -gt 0 ]; then  # stop it once it has printed enough
      local n=0
      while kill -0 "$pid" 2>/dev/null && [ "$n" -lt "$lines" ]; do
        sleep 1
        n=$(grep -c . "$dir/out.txt" 2>/dev/null || true)
        n=${n:-0}
      done
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    elif ! wait "$pid"; then
      echo "$name ($side) failed:"; tail -5 "$dir/err.txt"; return 1
    fi
  done
  python3 - "$work/$name/torch/out.txt" "$work/$name/tg/out.txt" <<'PY'
import re, sys
a, b = (open(p).read().split("\n") for p in sys.argv[1:])
num = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")
worst = 0.0
for la, lb in zip(a, b):
    if la.strip() or lb.strip():
        print(f"  LibTorch: {la}\n  tapegrad: {lb}")
    for x, y in zip(num.findall(la), num.findall(lb)):
        x, y = float(x), float(y)
        worst = max(worst, abs(x - y) / max(1.0, abs(x)))
print(f"  lines: {len(a)} vs {len(b)}; largest relative difference of the numbers: {worst:.3g}")
PY
}
run_pair dcgan "$examples/cpp/dcgan/dcgan.cpp" "" 3 --epochs 1  # a banner, steps 10 and 20
run_pair custom-dataset "$examples/cpp/custom-dataset/custom-dataset.cpp" "$cv_flags" 0
