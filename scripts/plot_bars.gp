# A benchmark table as grouped bars: one group per row (e.g. per thread count), one bar per
# column after the first (e.g. per implementation), from a CSV whose first line names the columns
# (the --plot file of benchmarks/bench_mlp, or any CSV in that shape):
#
#   gnuplot -e "csv='t.csv'; out='t.png'; title='MLP step'; ylabel='ms per step'" \
#       scripts/plot_bars.gp
#
# Each bar is labelled with its value; lower is better for times.
if (!exists("csv")) csv = 'plot.csv'
if (!exists("out")) out = 'plot.png'
if (!exists("title")) title = ''
if (!exists("ylabel")) ylabel = ''

if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 900,480 enhanced font 'DejaVu Sans,11'
} else {
    set terminal png size 900,480
}
set output out
set datafile separator ','
set key autotitle columnhead outside bottom center horizontal
set title title noenhanced
set ylabel ylabel
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set grid ytics lc rgb '#dddddd'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
# the columns, counted on the header line
ncol = int(system("head -n 1 '" . csv . "' | awk -F, '{ print NF }'"))
bars = ncol - 1
plot for [i=2:ncol] csv using i:xtic(1) lc i-1, \
     for [i=2:ncol] csv using ($0 + (i - 2 - (bars - 1) / 2.0) / (bars + 1)):(column(i)):(column(i) >= 1000 ? sprintf('%.0f', column(i)) : sprintf('%.3g', column(i))) \
         with labels offset 0, 0.7 font ',9' notitle
