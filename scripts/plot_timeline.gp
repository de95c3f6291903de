# One training step per rank as a timeline (benchmarks/bench_ddp --timeline, bench_fsdp
# --timeline): a row per rank and kind of work, bars from start to end (ms since rank 0's step
# began), bucket-ready marks:
#
#   gnuplot -e "csv='t.csv'; out='t.png'; title='...'; world=2" scripts/plot_timeline.gp
#   gnuplot -e "csv='t.csv'; out='t.png'; title='...'; world=2; config='stage 3'" ...
#
# The CSV's first column is the world size (bench_ddp) or the configuration (bench_fsdp; set
# config). Rows: for rank r, y = 3r + 2 compute (forward, backward, optimizer step, and the waits
# for collectives as thin black bars), y = 3r + 1 the communication thread's collectives.
if (!exists("csv")) csv = 'timeline.csv'
if (!exists("out")) out = 'timeline.png'
if (!exists("title")) title = ''
if (!exists("world")) world = 2
if (!exists("config")) config = sprintf('%d', world)

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
    set ytics add (sprintf('rank %d compute', r) 3*r+2, sprintf('rank %d communication', r) 3*r+1)
}
set grid xtics lc rgb '#dddddd'
set key outside bottom center horizontal
set style fill solid 0.85 border -1
h = 0.35
sel(w, what, v) = (strcol(1) eq config && strcol(3) eq what) ? v : NaN
y(kind) = 3*column(2) + kind
box(what) = sel(1, what, ($4+$5)/2)
ddp = config eq sprintf('%d', world)  # bench_ddp's file: all-reduces; else bench_fsdp's
plot csv skip 1 using (box('forward')):(y(2)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#4c72b0' title 'forward', \
     '' skip 1 using (box('backward')):(y(2)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#dd8452' title 'backward', \
     '' skip 1 using (box('optimizer step')):(y(2)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#55a868' title 'optimizer step', \
     '' skip 1 using (box('wait')):(y(2)):(($5-$4)/2):(h/3) \
         with boxxyerror lc rgb '#000000' title (ddp ? '' : 'waiting for a collective'), \
     '' skip 1 using (box('all-reduce')):(y(1)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#c44e52' title (ddp ? 'bucket all-reduce' : ''), \
     '' skip 1 using (box('reduce-scatter')):(y(1)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#c44e52' title (ddp ? '' : 'reduce-scatter'), \
     '' skip 1 using (box('all-gather')):(y(1)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#8172b3' title (ddp ? '' : 'all-gather'), \
     '' skip 1 using (box('divide')):(y(1)):(($5-$4)/2):(h) \
         with boxxyerror lc rgb '#937860' title (ddp ? '' : 'divide'), \
     '' skip 1 using (sel(1, 'bucket ready', $4)):(y(2)+h) \
         with points pt 11 ps 1.2 lc rgb '#000000' title (ddp ? 'bucket ready' : '')
