#!/bin/sh
# Plots a training CSV (default fashion_mnist_mlp.csv) to a PNG (default: the CSV's name with .png).
#   scripts/plot.sh [metrics.csv [plot.png [title]]]
# The title defaults to the example's network, read from the CSV's name (_mlp, _cnn, or char_gpt
# and char_lstm, whose CSVs have their own columns: scripts/plot_gpt.gp).
set -e
csv=${1:-fashion_mnist_mlp.csv}
out=${2:-${csv%.csv}.png}
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2; exit 1; }
[ -r "$csv" ] || { echo "plot.sh: cannot read $csv" >&2; exit 1; }
case "$csv" in
  *cnn*) title="Fashion-MNIST CNN conv32-BN-pool-conv64-BN-pool-128-10 (tapegrad)" ;;
  *) title="Fashion-MNIST MLP 784-256-128-10 (tapegrad)" ;;
esac
title=${3:-$title}
case "$csv" in
  *char_gpt*) script=plot_gpt.gp; title=${3:-char-level GPT on Debian fortunes, 6 x d256 (tapegrad)} ;;
  *char_lstm*) script=plot_gpt.gp; title=${3:-char-level LSTM on Debian fortunes, 2 x 256 (tapegrad)} ;;
  *) script=plot_training.gp ;;
esac
gnuplot -e "csv='$csv'; out='$out'; title='$title'" "$(dirname "$0")/$script"
echo "wrote $out"
