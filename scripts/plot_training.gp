# Loss and accuracy per epoch from the CSV written by examples/fashion_mnist_mlp (or any CSV with
# the columns epoch,train_loss,train_acc,test_loss,test_acc,seconds), as a two-panel PNG:
#
#   gnuplot -e "csv='fashion_mnist_mlp.csv'; out='fashion_mnist_mlp.png'" scripts/plot_training.gp
#
# csv and out default to fashion_mnist_mlp.csv / .png. Needs gnuplot (Debian: gnuplot-nox).
if (!exists("csv")) csv = 'fashion_mnist_mlp.csv'
if (!exists("out")) out = 'fashion_mnist_mlp.png'
if (!exists("title")) title = 'Fashion-MNIST MLP 784-256-128-10 (tapegrad)'

if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1200,480 enhanced font 'DejaVu Sans,11'
} else {
    set terminal png size 1200,480
}
set output out
set datafile separator ','
set key autotitle columnhead
set grid lc rgb '#dddddd'
set xlabel 'epoch'
set xtics 1
set style line 1 lc rgb '#1f77b4' lw 2 pt 7 ps 0.8
set style line 2 lc rgb '#d62728' lw 2 pt 5 ps 0.8

stats csv using 1 nooutput
last_epoch = STATS_max
set xrange [0.5:last_epoch + 0.5]
if (last_epoch > 20) set xtics auto

set multiplot layout 1,2 title title
set title 'cross-entropy loss'
set ylabel 'loss'
set key top right
plot csv using 1:2 with linespoints ls 1 title 'train', \
     ''  using 1:4 with linespoints ls 2 title 'test'

set title 'accuracy'
set ylabel 'accuracy (%)'
set key bottom right
set format y '%.0f'
final_acc = 0
stats csv using (final_acc = $5) nooutput
set label 1 sprintf('final test accuracy %.2f%%', 100 * final_acc) at graph 0.03, 0.94 left front
plot csv using 1:($3 * 100) with linespoints ls 1 title 'train', \
     ''  using 1:($5 * 100) with linespoints ls 2 title 'test'
unset multiplot
