# Peak memory and step time against the planner's budget, from benchmarks/results/checkpoint_<host>.csv
# (written by benchmarks/bench_checkpoint), as a two-panel PNG:
#
#   gnuplot -e "csv='benchmarks/results/checkpoint_HOST.csv'; out='benchmarks/results/checkpoint_HOST.png'" \
#       scripts/plot_checkpoint.gp
#
# Left: measured and predicted step peak (MiB) of each planner row against its budget, with the
# budget line (y = x), the no-checkpointing and sqrt(n) peaks, and the measured activation memory
# (memory::Stats::peak_saved_bytes) of each planner row. Right: median step time.
if (!exists("csv")) csv = 'benchmarks/results/checkpoint_amd-epyc-avx2-2cpu.csv'
if (!exists("out")) out = 'benchmarks/results/checkpoint_amd-epyc-avx2-2cpu.png'

if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 1200,480 enhanced font 'DejaVu Sans,11'
} else {
    set terminal png size 1200,480
}
set output out
set datafile separator ','
set grid lc rgb '#dddddd'
MiB = 1048576.0
is_plan(c) = strstrt(strcol(1), 'planner') == 1 && column(10) > 0
stats csv using (strcol(1) eq 'none' ? $10 / MiB : NaN) nooutput
none_peak = STATS_max
stats csv using (strcol(1) eq 'none' ? $14 : NaN) nooutput
none_t = STATS_max
stats csv using (strcol(1) eq 'sqrt(n)' ? $10 / MiB : NaN) nooutput
sqrt_peak = STATS_max
stats csv using (strcol(1) eq 'sqrt(n)' ? $14 : NaN) nooutput
sqrt_t = STATS_max
stats csv using ($10 > 0 ? $14 : NaN) nooutput
tmax = STATS_max
stats csv using (is_plan(0) ? $2 / MiB : NaN) nooutput
xmin = STATS_min
xmax = STATS_max
set xrange [xmin * 0.9 : none_peak * 1.05]
set xlabel 'budget (MiB above parameters + gradients)'
set key bottom right opaque box lc rgb '#cccccc'

set multiplot layout 1,2 title 'Checkpointing a 64 x (Linear(1024)+Tanh) MLP, batch 256, float32 (tapegrad)'
set ylabel 'step peak (MiB, allocator statistics)'
set yrange [0 : none_peak * 1.1]
plot x title 'budget (y = x)' lc rgb '#999999' dt 2, \
     none_peak title sprintf('no checkpointing %.0f MiB', none_peak) lc rgb '#d62728' lw 2, \
     sqrt_peak title sprintf('sqrt(n) segments %.0f MiB', sqrt_peak) lc rgb '#2ca02c' lw 2, \
     csv using (is_plan(0) ? $2 / MiB : NaN):($8 / MiB) title 'planner: predicted' \
         with points pt 6 ps 1.6 lc rgb '#ff7f0e', \
     csv using (is_plan(0) ? $2 / MiB : NaN):($10 / MiB) title 'planner: measured' \
         with linespoints pt 7 ps 0.9 lw 2 lc rgb '#1f77b4', \
     csv using (is_plan(0) ? $2 / MiB : NaN):($17 / MiB) title 'planner: activations (measured)' \
         with linespoints pt 5 ps 0.7 lw 1 dt 3 lc rgb '#9467bd'
set ylabel 'step time (s, median)'
set yrange [0 : tmax * 1.2]
plot none_t title sprintf('no checkpointing %.2f s', none_t) lc rgb '#d62728' lw 2, \
     sqrt_t title sprintf('sqrt(n) segments %.2f s', sqrt_t) lc rgb '#2ca02c' lw 2, \
     csv using (is_plan(0) ? $2 / MiB : NaN):14 title 'planner' \
         with linespoints pt 7 ps 0.9 lw 2 lc rgb '#1f77b4'
unset multiplot
