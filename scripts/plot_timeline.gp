# One training step per rank as a timeline (benchmarks/bench_ddp --timeline): a row per rank and
# kind of work, bars from start to end (ms since rank 0's step began), bucket-ready marks:
#
#   gnuplot -e "csv='t.csv'; out='t.png'; title='...'; world=2" scripts/plot_timeline.gp
#
# Rows: for rank r, y = 3r + 2 compute (forward, backward, optimizer step), y = 3r + 1 the
# communication thread's all-reduces; ready marks on the compute row.
if (!exists("csv")) csv = 'timeline.csv'
if (!exists("out")) out = 'timeline.png'
if (!exists("title")) title = ''
if (!exists("world")) world = 2

if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1000,120+90*world enhanced font 'DejaVu Sans,10'
} else {
    set terminal png size 1000,120+90*world
}
set output out
set datafile separator ','
set title title noenhanced
set xlabel 'ms since rank 0 began the step'
set yrange [0:3*world]
set ytics ()
do for [r=0:world-1] {
    set ytics add (sprintf('rank %d compute', r) 3*r+2, sprintf('rank %d all-reduce', r) 3*r+1)
}
set grid xtics lc rgb '#dddddd'
set key outside bottom center horizontal
set style fill solid 0.85 border -1
h = 0.35
sel(w, what, v) = (strcol(1) eq sprintf('%d', world) && strcol(3) eq what) ? v : NaN
y(kind) = 3*column(2) + kind
plot csv skip 1 using (sel(1, 'forward', ($4+$5)/2)):(y(2)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#4c72b0' title 'forward', \
     '' skip 1 using (sel(1, 'backward', ($4+$5)/2)):(y(2)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#dd8452' title 'backward', \
     '' skip 1 using (sel(1, 'optimizer step', ($4+$5)/2)):(y(2)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#55a868' title 'optimizer step', \
     '' skip 1 using (sel(1, 'all-reduce', ($4+$5)/2)):(y(1)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#c44e52' title 'bucket all-reduce', \
     '' skip 1 using (sel(1, 'bucket ready', $4)):(y(2)+h) \
         with points pt 11 ps 1.2 lc rgb '#000000' title 'bucket ready'
