#!/bin/sh
# Plots a training CSV (default fashion_mnist_mlp.csv) to a PNG (default: the CSV's name with .png).
#   scripts/plot.sh [metrics.csv [plot.png]]
set -e
csv=${1:-fashion_mnist_mlp.csv}
out=${2:-${csv%.csv}.png}
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2; exit 1; }
[ -r "$csv" ] || { echo "plot.sh: cannot read $csv" >&2; exit 1; }
gnuplot -e "csv='$csv'; out='$out'" "$(dirname "$0")/plot_training.gp"
echo "wrote $out"
