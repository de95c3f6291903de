#!/usr/bin/env bash
# Builds the suites that run threads under ThreadSanitizer and runs them:  bash scripts/tsan.sh
#   test_threads       user threads training with dropout at once, bit for bit against one
#                      thread alone; the CPU backend's kernel threads; concurrent callers
#   test_generator     per-thread default generators, a Generator shared by two threads
#   test_pool_threads  the small-object pool: frees on another thread, hand-over at thread exit
#   test_data_workers  make_data_loader's worker threads making batches while the loop trains
#   test_saved_hooks   two threads training under their own saved-tensor hooks at once
#   test_memory_budget two threads training under memory budgets of their own
#   test_distributed_mpi (1 rank, and 2 under mpirun) the communication thread running collectives
#                      while backward goes on, DDP's buckets and chunks (when built with MPI)
#   test_fsdp_mpi      (1 rank, and 2 under mpirun) FullyShardedDataParallel's reduce-scatters
#                      posted while backward runs, the all-gathers before forward
# scripts/test.sh runs it unless TG_SKIP_TSAN=1. About 3 minutes on the 2-core VM (the build is
# most of it); the tests are bounded by a 10-minute timeout.
#
# GCC's ThreadSanitizer, like the rest of the build. The CPU backend's AVX2/AVX-512 clones of its
# float32 loops are left out under TSan (Note [Wider SIMD] in src/backend/cpu/elementwise.cpp):
# the loader resolves them before the TSan runtime has started, which crashed every test at
# start-up; every clone computes the same bits, so the default one stands for them all.
# OpenCL and CUDA are off: their drivers are not built for TSan. OpenBLAS is not instrumented;
# its own threads stay off (OPENBLAS_NUM_THREADS=1) except where test_threads turns them on for
# tapegrad's elementwise threads, which synchronise through std::mutex and TSan sees that; the
# GEMMs OpenBLAS then runs on 2 threads are races to TSan (scripts/tsan.supp says why and drops
# only reports with an OpenBLAS frame).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TG_JOBS:-2}
suites=(test_threads test_generator test_pool_threads test_data_workers test_saved_hooks
  test_memory_budget)
tests=("${suites[@]}")
if command -v mpirun >/dev/null; then
  suites+=(test_distributed_mpi test_fsdp_mpi)
  tests+=(test_distributed_mpi test_distributed_mpi_np2 test_fsdp_mpi test_fsdp_mpi_np2)
fi
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTG_EXAMPLES=OFF -DTG_OPENCL=OFF \
  -DTG_CUDA=OFF -DCMAKE_CXX_FLAGS="-fsanitize=thread" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread"
cmake --build build/tsan -j"$jobs" --target "${suites[@]}"
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
# halt_on_error: the first race fails the suite (TSan's exit code 66 otherwise comes at the end)
# Open MPI is not built for TSan: its TCP transport's own locking (reported at MPI_Init) is kept
# out by using only shared memory (vader), which one machine needs anyway.
OMPI_MCA_btl=self,vader \
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" OPENBLAS_NUM_THREADS=1 \
  ctest --test-dir build/tsan --output-on-failure -j1 --timeout 600 -R "$regex"
