# Training and validation loss against time from the CSV written by examples/char_gpt (columns
# step,elapsed_s,train_loss,val_loss,tokens_per_s), as a PNG:
#
#   gnuplot -e "csv='char_gpt.csv'; out='char_gpt.png'" scripts/plot_gpt.gp
#
# Needs gnuplot (Debian: gnuplot-nox).
if (!exists("csv")) csv = 'char_gpt.csv'
if (!exists("out")) out = 'char_gpt.png'
if (!exists("title")) title = 'char-level GPT on Debian fortunes, 6 x d256 (tapegrad)'

if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,520 enhanced font 'DejaVu Sans,11'
} else {
    set terminal png size 900,520
}
set output out
set datafile separator ','
set key autotitle columnhead top right
set grid lc rgb '#dddddd'
set title title
set xlabel 'seconds'
set ylabel 'cross-entropy (nats per character)'
set style line 1 lc rgb '#1f77b4' lw 2 pt 7 ps 0.6
set style line 2 lc rgb '#d62728' lw 2 pt 5 ps 0.6
plot csv using 2:3 with linespoints ls 1 title 'train', \
     csv using 2:4 with linespoints ls 2 title 'validation'
