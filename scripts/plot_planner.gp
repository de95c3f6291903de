# Step time against measured step peak for each checkpointing method, from
# benchmarks/results/planner[_gpt]_<host>.plot.csv (written by benchmarks/bench_planner):
#
#   gnuplot -e "csv='benchmarks/results/planner_gpt_HOST.plot.csv'; out='benchmarks/results/planner_gpt_HOST.png'; title='char_gpt'" \
#       scripts/plot_planner.gp
#
# One point per row: no checkpointing, sqrt(n) equal segments, and the planner's single-level and
# nested plans at the bench's budgets (the lower left is better).
if (!exists("csv")) csv = 'benchmarks/results/planner_amd-epyc-skx-2cpu.plot.csv'
if (!exists("out")) out = 'benchmarks/results/planner_amd-epyc-skx-2cpu.png'
if (!exists("title")) title = '64-module heterogeneous chain'

if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {
    set terminal pngcairo size 800,520 enhanced font 'DejaVu Sans,11'
} else {
    set terminal png size 800,520
}
set output out
set datafile separator ','
set grid lc rgb '#dddddd'
set key top right opaque box lc rgb '#cccccc'
set title 'Checkpointing ' . title . ': step time against memory (tapegrad, float32, 1 thread)' noenhanced
set xlabel 'measured step peak (MiB, allocator statistics above the starting live bytes)'
set ylabel 'step time (ms, median)'
stats csv using 3 nooutput
set yrange [0 : STATS_max * 1.15]
stats csv using 2 nooutput
set xrange [0 : STATS_max * 1.1]
is(m) = strcol(1) eq m
plot csv using (is('none') ? $2 : NaN):3 title 'no checkpointing' with points pt 7 ps 1.8 lc rgb '#d62728', \
     csv using (is('sqrt') ? $2 : NaN):3 title 'sqrt(n) equal segments' with points pt 9 ps 1.8 lc rgb '#2ca02c', \
     csv using (is('single') ? $2 : NaN):3 title 'planner, single-level' with points pt 5 ps 1.4 lc rgb '#ff7f0e', \
     csv using (is('nested') ? $2 : NaN):3 title 'planner, nested' with points pt 6 ps 1.8 lw 2 lc rgb '#1f77b4'
