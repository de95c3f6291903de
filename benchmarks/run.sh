#!/usr/bin/env bash
# Runs every benchmark with OpenBLAS's fast kernel and writes CSV + markdown to benchmarks/results/.
#
#   benchmarks/run.sh                # everything (about 15 minutes on the 2-core dev VM)
#   benchmarks/run.sh autograd mlp   # only some: autograd mlp deep-memory deep-memory-rss fmnist
#                                    # seed-size checkpoint opencl soak conv conv-suite conv3d cnn-epoch gpt lstm ddp
#                                    # fsdp memory-budget planner (opencl
#                                    # needs TG_OPENCL and an OpenCL device, e.g. PoCL; ddp needs
#                                    # TG_MPI and mpirun, as fsdp does; FSDP_STAGES, default 1,2)
#
# DNNL=1 runs them on a build with the oneDNN convolutions (-DTG_DNNL=ON, needs libdnnl-dev) in
# <repo>/build-bench-dnnl unless BUILD_DIR says, its results named <bench>_dnnl_<host>.*.
# Environment: BUILD_DIR (default <repo>/build-bench; configured with -DTG_BENCHMARKS=ON and built
# here unless REBUILD=0), CMAKE_ARGS (extra configure options, e.g. "-DTG_CUDA=OFF -DTG_OPENCL=OFF":
# linking cuBLAS adds ~160 MB to every tapegrad process's RSS), REPS_MLP (default 10) and
# ROUNDS_MLP (default 3), ROUNDS_FMNIST (default 3), REPS_AUTOGRAD (default 10), REPS_OPENCL
# (default 10), REPS_CONV (default 15) and ROUNDS_CONV (default 3), ROUNDS_CONV_SUITE (default 2), ROUNDS_CNN (default 2),
# ROUNDS_GPT (default 3), ROUNDS_LSTM (default 3), ROUNDS_DDP (default 3), ROUNDS_MEMORY (default 3), BATCHES_CNN (default 469, an epoch) and THREADS_CNN (default 2), HOST_TAG
# (the host part of the names of the results that compare implementations, <bench>_<tag>.*;
# default from the CPU model, its model number and the CPU count, so results of other hosts are
# kept; CONV_TAG is an older name for it).
# Every benchmark that compares implementations runs each in a process of its own, alternating
# them over rounds, with LibTorch swept over its thread settings (its fastest is the peer), and
# draws its table as a PNG (scripts/plot_bars.gp) beside the markdown.
# Debian's OpenBLAS 0.3.21 falls back to its slowest (Prescott) kernel on recent CPUs unless
# OPENBLAS_CORETYPE is set, so it is SkylakeX where the CPU has AVX-512 and Haswell where it has
# AVX2 (SkylakeX on a CPU without AVX-512 dies of SIGILL). Both sides of every comparison run on
# the BLAS kernel the CPU can run fastest, LibTorch's best configuration and ours, and the SGEMM
# peak is the machine's: some hosts pin OPENBLAS_CORETYPE=Haswell in the environment on CPUs with
# AVX-512 (a Zen 5 EPYC runs SGEMM at 125 GFLOP/s per core that way, 243 with SkylakeX), so an
# AVX2 kernel set by the caller is replaced there, saying so, unless KEEP_CORETYPE=1. The test
# suite passes under either kernel on such a host; every benchmark also prints both sides' loss.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "${DNNL:-0}" = 1 ]; then
    BUILD=${BUILD_DIR:-$ROOT/build-bench-dnnl}
    CMAKE_ARGS="${CMAKE_ARGS:-} -DTG_DNNL=ON"
else
    BUILD=${BUILD_DIR:-$ROOT/build-bench}
fi
RES=$ROOT/benchmarks/results
if grep -q avx512f /proc/cpuinfo; then
    case "${OPENBLAS_CORETYPE:-}" in
        SkylakeX|SKYLAKEX|Cooperlake|COOPERLAKE) ;;
        *) if [ -n "${OPENBLAS_CORETYPE:-}" ] && [ "${KEEP_CORETYPE:-0}" = 1 ]; then :
           else
               [ -n "${OPENBLAS_CORETYPE:-}" ] &&
                   echo "run.sh: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE on a CPU with AVX-512: running SkylakeX (KEEP_CORETYPE=1 keeps it)" >&2
               export OPENBLAS_CORETYPE=SkylakeX
           fi ;;
    esac
elif [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -q avx2 /proc/cpuinfo; then
    export OPENBLAS_CORETYPE=Haswell
fi
mkdir -p "$RES"

WHAT=${*:-autograd mlp deep-memory deep-memory-rss fmnist seed-size checkpoint opencl soak conv conv-suite conv3d cnn-epoch gpt lstm ddp fsdp memory-budget planner}
B=$BUILD/benchmarks

# Only the executables of the benchmarks asked for are built (the machine is shared).
# bench_mlp_rss builds its children bench_mlp_rss_tg and bench_mlp_rss_torch too, bench_conv its
# sides bench_conv_tg, bench_conv_torch and bench_conv_gemm.
targets=""
for w in $WHAT; do
    case $w in
    autograd) targets+=" bench_autograd" ;;
    mlp | seed-size | fmnist) targets+=" bench_mlp" ;;
    deep-memory) targets+=" bench_mlp_memory" ;;
    deep-memory-rss) targets+=" bench_mlp_rss" ;;
    checkpoint) targets+=" bench_checkpoint" ;;
    soak) targets+=" bench_soak" ;;
    conv) targets+=" bench_conv" ;;
    conv-suite) targets+=" bench_conv_suite" ;;
    conv3d) targets+=" bench_conv3d" ;;
    cnn-epoch) targets+=" bench_cnn_epoch" ;;
    gpt) targets+=" bench_gpt" ;;
    lstm) targets+=" bench_lstm" ;;
    ddp) targets+=" bench_ddp" ;;
    fsdp) targets+=" bench_fsdp" ;;
    memory-budget) targets+=" bench_memory" ;;
    planner) targets+=" bench_planner" ;;
    esac
done
missing=0
for t in $targets; do [ -x "$B/$t" ] || missing=1; done
if [ "$missing" = 1 ] || [ "${REBUILD:-1}" = 1 ]; then
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTG_BENCHMARKS=ON \
        -DTG_TESTS=OFF -DTG_EXAMPLES=OFF ${CMAKE_ARGS:-} >/dev/null
    if grep -q '^TG_OPENCL:BOOL=ON' "$BUILD/CMakeCache.txt" && [[ " $WHAT " == *" opencl "* ]]; then
        targets+=" bench_mlp_opencl"
    fi
    if [ -n "$targets" ]; then cmake --build "$BUILD" -j2 --target $targets; fi
fi

machine() {  # markdown lines describing the machine
    echo "- machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs," \
         "model $(lscpu | sed -n 's/^Model: *//p'), kernel $(uname -r)"
    echo "- packages: libtorch-dev $(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null)," \
         "OpenBLAS $(dpkg-query -W -f='${Version}' libopenblas0-pthread 2>/dev/null)," \
         "g++ $(g++ -dumpfullversion)"
    echo "- tapegrad build: $(grep -E '^TG_(CUDA|OPENCL|MPI|DNNL):' "$BUILD/CMakeCache.txt" | tr '\n' ' ')"
    echo "- tapegrad commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none)" \
         "(+ working tree), run $(date -u '+%Y-%m-%d %H:%M UTC')"
}

# The host part of a results file's name: the CPU model, its model number and the CPU count
# (CONV_TAG overrides it), e.g. intel-xeon-processor-m167-2cpu.
host_tag() {
    [ "${DNNL:-0}" = 1 ] && printf dnnl_
    echo "${HOST_TAG:-${CONV_TAG:-$(lscpu | sed -n 's/^Model name: *//p' | tr 'A-Z' 'a-z' |
        sed -e 's/([^)]*)//g' -e 's/ cpu / /; s/@.*//' -e 's/[^a-z0-9]\{1,\}/-/g' \
            -e 's/^-//; s/-$//')-m$(lscpu | sed -n 's/^Model: *//p')-$(nproc)cpu}}"
}

# finish NAME TITLE YLABEL: NAME.md = the driver's NAME.part.md and the build, and its PNG.
finish() {
    { cat "$RES/$1.part.md"; echo; echo "## Build"; echo; machine; } > "$RES/$1.md"
    rm "$RES/$1.part.md"
    bars "$1" "$2" "$3"
}

# autograd_plot CSV: bench_autograd's CSV as a plot table, fwd+bwd ns per op of each side.
autograd_plot() {
    awk -F, 'NR == 1 { print "chain,tapegrad,LibTorch"; next }
             { k = $1 " elem " ($2 == "const" ? "const" : "requires grad") }
             $3 == "tapegrad" { tg[k] = $6; keys[++n] = k }
             $3 == "libtorch" { lt[k] = $6 }
             END { for (i = 1; i <= n; ++i) print keys[i] "," tg[keys[i]] "," lt[keys[i]] }' "$1"
}
# opencl_plot CSV: bench_mlp_opencl's CSV as a plot table, step ms of tapegrad and raw CLBlast.
opencl_plot() {
    awk -F, 'NR == 1 { print "batch,tapegrad,CLBlast GEMMs alone"; next }
             { print "batch " $2 "," $3 "," $4 }' "$1"
}

# bars NAME TITLE YLABEL: benchmarks/results/NAME.png from NAME.plot.csv (kept beside it).
bars() {
    if command -v gnuplot >/dev/null && [ -f "$RES/$1.plot.csv" ]; then
        gnuplot -e "csv='$RES/$1.plot.csv'; out='$RES/$1.png'; title='$2'; ylabel='$3'" \
            "$ROOT/scripts/plot_bars.gp"
    fi
}

for w in $WHAT; do
    case $w in
    autograd)
        tag=$(host_tag)
        OPENBLAS_NUM_THREADS=1 "$B/bench_autograd" --threads 1 --reps "${REPS_AUTOGRAD:-10}" \
            --csv "$RES/autograd_$tag.csv" --md "$RES/autograd_$tag.part.md" >/dev/null
        { machine; echo; cat "$RES/autograd_$tag.part.md"; } > "$RES/autograd_$tag.md"
        rm "$RES/autograd_$tag.part.md"
        autograd_plot "$RES/autograd_$tag.csv" > "$RES/autograd_$tag.plot.csv"
        bars "autograd_$tag" "10k-op chain, forward + backward, 1 thread ($tag)" \
            "ns per op (median)" ;;
    mlp)  # about 5 minutes: 14 processes per round
        tag=$(host_tag)
        "$B/bench_mlp" --what step --threads-list 1,2 --rounds "${ROUNDS_MLP:-3}" \
            --reps "${REPS_MLP:-10}" --tag "$tag" --csv "$RES/mlp_step_$tag.csv" \
            --md "$RES/mlp_step_$tag.part.md" --plot "$RES/mlp_step_$tag.plot.csv" >/dev/null
        finish "mlp_step_$tag" "MLP training step 2048x2048 ($tag)" "ms per step (median)" ;;
    deep-memory)
        tag=$(host_tag)
        OPENBLAS_NUM_THREADS=1 "$B/bench_mlp_memory" --threads 1 \
            --csv "$RES/mlp_deep_memory_$tag.csv" --md "$RES/mlp_deep_memory_$tag.md" >/dev/null ;;
    deep-memory-rss)
        tag=$(host_tag)
        OPENBLAS_NUM_THREADS=1 "$B/bench_mlp_rss" --threads 1 --csv "$RES/mlp_deep_memory_rss_$tag.csv" \
            --md "$RES/mlp_deep_memory_rss_$tag.md" >/dev/null ;;
    fmnist)  # about 4 minutes: 11 processes per round, an epoch each
        tag=$(host_tag)
        "$B/bench_mlp" --what epoch --threads-list 1,2 --rounds "${ROUNDS_FMNIST:-3}" \
            --tag "$tag" --csv "$RES/fmnist_epoch_$tag.csv" --md "$RES/fmnist_epoch_$tag.part.md" \
            --plot "$RES/fmnist_epoch_$tag.plot.csv" >/dev/null
        finish "fmnist_epoch_$tag" "Fashion-MNIST MLP epoch ($tag)" "s per epoch (median)" ;;
    seed-size)
        tag=$(host_tag)
        "$B/bench_mlp" --seed-size --tag "$tag" --csv "$RES/mlp_seed_size_$tag.csv" \
            --md "$RES/mlp_seed_size_$tag.md" --plot "$RES/mlp_seed_size_$tag.plot.csv" >/dev/null
        bars "mlp_seed_size_$tag" "The Neanderthal article network, one step ($tag)" \
            "ms per step (median)" ;;
    checkpoint)
        tag=$(host_tag)
        OPENBLAS_NUM_THREADS=1 "$B/bench_checkpoint" --out "$RES" --tag "$tag" >/dev/null
        if command -v gnuplot >/dev/null; then
            gnuplot -e "csv='$RES/checkpoint_$tag.csv'; out='$RES/checkpoint_$tag.png'" \
                "$ROOT/scripts/plot_checkpoint.gp"
        fi ;;
    opencl)
        if grep -q '^TG_OPENCL:BOOL=ON' "$BUILD/CMakeCache.txt"; then
            tag=$(host_tag)
            OPENBLAS_NUM_THREADS=1 "$B/bench_mlp_opencl" --device opencl \
                --reps "${REPS_OPENCL:-10}" --csv "$RES/bench_mlp_opencl_$tag.csv" \
                --md "$RES/bench_mlp_opencl_$tag.md" >/dev/null
            opencl_plot "$RES/bench_mlp_opencl_$tag.csv" > "$RES/bench_mlp_opencl_$tag.plot.csv"
            bars "bench_mlp_opencl_$tag" "MLP step on OpenCL (PoCL), 1 thread ($tag)" \
                "ms per step (median)"
        else
            echo "run.sh: opencl skipped (built with TG_OPENCL=OFF)" >&2
        fi ;;
    soak)  # about a minute; exits 1 when a bar fails, which must not stop the other benchmarks
        tag=$(host_tag)
        OPENBLAS_NUM_THREADS=1 "$B/bench_soak" --csv "$RES/soak_$tag.csv" --md "$RES/soak.part.md" \
            >/dev/null || echo "run.sh: bench_soak: a bar failed (see $RES/soak_$tag.md)" >&2
        { machine; echo; cat "$RES/soak.part.md"; } > "$RES/soak_$tag.md"
        rm "$RES/soak.part.md" ;;
    conv)  # about 5 minutes; each side a process of its own per round, on 1 and 2 threads
        tag=$(host_tag)
        "$B/bench_conv" --threads-list 1,2 --rounds "${ROUNDS_CONV:-3}" --reps "${REPS_CONV:-15}" \
            --tag "$tag" --csv "$RES/conv_$tag.csv" --md "$RES/conv_$tag.part.md" \
            --plot "$RES/conv_$tag.plot.csv" >/dev/null
        finish "conv_$tag" "Two-convolution step, N=64 ($tag)" "ms per step (median)" ;;
    conv-suite)  # about 5 minutes: every row in one process per side and round, 1 and 2 threads
        tag=$(host_tag)
        "$B/bench_conv_suite" --threads-list 1,2 --rounds "${ROUNDS_CONV_SUITE:-2}" --tag "$tag" \
            --csv "$RES/conv_suite_$tag.csv" --md "$RES/conv_suite_$tag.part.md" >/dev/null
        { cat "$RES/conv_suite_$tag.part.md"; echo; echo "## Build"; echo; machine; } \
            > "$RES/conv_suite_$tag.md"
        rm "$RES/conv_suite_$tag.part.md" ;;
    conv3d)  # about 4 minutes: each side a process of its own per round, on 1 and 2 threads
        tag=$(host_tag)
        "$B/bench_conv3d" --threads-list 1,2 --rounds "${ROUNDS_CONV3D:-3}" \
            --tag "$tag" --csv "$RES/conv3d_$tag.csv" --md "$RES/conv3d_$tag.part.md" \
            --plot "$RES/conv3d_$tag.plot.csv" >/dev/null
        finish "conv3d_$tag" "Two 3-D convolutions, N=8 16x32x32 ($tag)" "ms per step (median)" ;;
    cnn-epoch)  # about 5 minutes on 2 threads: 5 processes per round, an epoch each
        tag=$(host_tag)
        "$B/bench_cnn_epoch" --threads-list "${THREADS_CNN:-2}" --rounds "${ROUNDS_CNN:-2}" \
            --batches "${BATCHES_CNN:-469}" --tag "$tag" --csv "$RES/cnn_epoch_$tag.csv" \
            --md "$RES/cnn_epoch_$tag.part.md" --plot "$RES/cnn_epoch_$tag.plot.csv" >/dev/null
        finish "cnn_epoch_$tag" "Fashion-MNIST CNN epoch ($tag)" "s per epoch (median)" ;;
    gpt)  # about 5 minutes: the char_gpt model's step on 1 and 2 threads, then its memory
        tag=$(host_tag)
        "$B/bench_gpt" --threads-list 1,2 --rounds "${ROUNDS_GPT:-3}" --tag "$tag" \
            --csv "$RES/gpt_$tag.csv" --md "$RES/gpt_$tag.part.md" \
            --plot "$RES/gpt_$tag.plot.csv" >/dev/null
        finish "gpt_$tag" "char_gpt training step ($tag)" "ms per step (median)" ;;
    lstm)  # about 4 minutes: an LSTM's forward + backward on 1 and 2 threads
        tag=$(host_tag)
        "$B/bench_lstm" --threads-list 1,2 --rounds "${ROUNDS_LSTM:-3}" --tag "$tag" \
            --csv "$RES/lstm_$tag.csv" --md "$RES/lstm_$tag.part.md" \
            --plot "$RES/lstm_$tag.plot.csv" >/dev/null
        finish "lstm_$tag" "LSTM forward + backward ($tag)" "ms per step (median)" ;;
    fsdp)  # about 4 minutes: DDP and the ZeRO stages at 2 ranks (time), then at 3 (memory)
        tag=$(host_tag)
        for np in 2 3; do
            [ "$np" = 2 ] && rounds=${ROUNDS_FSDP:-3} || rounds=1
            OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$B/bench_fsdp" \
                --ranks "$np" --stages "${FSDP_STAGES:-1,2}" --rounds "$rounds" --tag "$tag" \
                --csv "$RES/fsdp${np}_$tag.csv" --md "$RES/fsdp${np}_$tag.part.md" \
                --plot "$RES/fsdp${np}_$tag.plot.csv" \
                --timeline "$RES/fsdp${np}_timeline_$tag.csv" >/dev/null
            finish "fsdp${np}_$tag" "Sharded data parallel vs DDP, $np ranks ($tag)" \
                "time and memory / DDP"
            if command -v gnuplot >/dev/null; then
                for st in $(echo "${FSDP_STAGES:-1,2}" | tr , ' '); do
                    gnuplot -e "csv='$RES/fsdp${np}_timeline_$tag.csv'; \
                        out='$RES/fsdp${np}_timeline_stage${st}_$tag.png'; world=$np; \
                        config='stage $st'; title='One stage-$st step, $np ranks ($tag)'" \
                        "$ROOT/scripts/plot_timeline.gp" 2>/dev/null
                done
            fi
        done ;;
    ddp)  # about 3 minutes: mpirun jobs of 1 and 2 ranks (root may run them: CI containers)
        tag=$(host_tag)
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$B/bench_ddp" \
            --rounds "${ROUNDS_DDP:-3}" --tag "$tag" --csv "$RES/ddp_$tag.csv" \
            --md "$RES/ddp_$tag.part.md" --plot "$RES/ddp_$tag.plot.csv" \
            --timeline "$RES/ddp_timeline_$tag.csv" >/dev/null
        finish "ddp_$tag" "Data-parallel MLP step, weak scaling ($tag)" "ms per step (median)"
        if command -v gnuplot >/dev/null; then
            gnuplot -e "csv='$RES/ddp_timeline_$tag.csv'; out='$RES/ddp_timeline_$tag.png'; \
                title='One data-parallel step, 2 ranks, buckets of 1 MiB ($tag)'; world=2" \
                "$ROOT/scripts/plot_timeline.gp"
        fi ;;
    memory-budget)  # about 10 minutes: 54 processes, the MLP, the 64-module chain and char_gpt
        # under MemoryBudgets, the chains under the planner's plans at the same budgets
        tag=$(host_tag)
        OPENBLAS_NUM_THREADS=1 "$B/bench_memory" --rounds "${ROUNDS_MEMORY:-3}" \
            --csv "$RES/memory_budget_$tag.csv" --md "$RES/memory_budget_$tag.part.md" >/dev/null
        { cat "$RES/memory_budget_$tag.part.md"; echo; echo "## Build"; echo; machine; } \
            > "$RES/memory_budget_$tag.md"
        rm "$RES/memory_budget_$tag.part.md" ;;
    planner)  # the planner against sqrt(n) and no checkpointing: the 64-module chain, char_gpt
        tag=$(host_tag)
        for m in chain gpt; do
            OPENBLAS_NUM_THREADS=1 "$B/bench_planner" --model $m --reps 7 --out "$RES" \
                --tag "$tag" >/dev/null
            name=planner_$tag
            [ $m = gpt ] && name=planner_gpt_$tag
            if command -v gnuplot >/dev/null; then
                gnuplot -e "csv='$RES/$name.plot.csv'; out='$RES/$name.png'; title='$([ $m = gpt ] && echo char_gpt || echo 'a 64-module chain')'" \
                    "$ROOT/scripts/plot_planner.gp"
            fi
        done ;;
    *) echo "run.sh: unknown benchmark '$w'" >&2; exit 2 ;;
    esac
done

# peak_<host>: every compute benchmark of this host that has results, as a fraction of the
# host's SGEMM peak on the same threads (the "SGEMM peak" lines of their "## Bars"), tapegrad
# beside LibTorch at its best: one table and one PNG for the README (issue 31).
tag=$(host_tag)
{
    echo "benchmark,tapegrad,LibTorch best"
    for b in "gpt:GPT step" "cnn_epoch:CNN epoch" "conv:conv step" "mlp_step:MLP step"; do
        f=$RES/${b%%:*}_$tag.md
        [ -f "$f" ] || continue
        sed -n "s/^- \([0-9]*\) thread(s): SGEMM peak .*tapegrad's [a-z]* \**\([0-9.]*\)\**.*LibTorch best's \([0-9.]*\).*/${b#*:} \1 thr,\2,\3/p" "$f"
    done
} > "$RES/peak_$tag.plot.csv"
if [ "$(wc -l < "$RES/peak_$tag.plot.csv")" -gt 1 ]; then
    bars "peak_$tag" "Fraction of the SGEMM peak on the same threads ($tag)" "fraction of peak"
else  # none of those results for this tag yet (e.g. DNNL=1 run.sh conv-suite alone)
    rm "$RES/peak_$tag.plot.csv"
fi

# mlp_<host>.md: the deep-MLP memory sections (bench_mlp_memory, bench_mlp_rss) of this host that
# exist, behind one machine header (rewritten only when one was run).
case " $WHAT " in
*" deep-memory"*) ;;
*) echo "results in $RES"; exit 0 ;;
esac
{
    echo "# bench_mlp results"
    echo
    machine
    for f in mlp_deep_memory_$(host_tag) mlp_deep_memory_rss_$(host_tag); do
        [ -f "$RES/$f.md" ] || continue
        echo
        sed 's/^# /## /' "$RES/$f.md"
    done
} > "$RES/mlp_$(host_tag).md"
echo "results in $RES: <bench>_<host>.md, CSV and PNG files"
