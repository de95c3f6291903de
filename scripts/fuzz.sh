#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan), writes their seed
# corpora with the library, fuzzes each target for a bounded time, then replays every input of
# each corpus once more with UBSan halting on the first report. Any finding fails the script,
# and the crashing input is printed (hex) so that it can be reproduced:
#   build/fuzz/fuzz_<target> crash-file
# scripts/test.sh runs it unless TG_SKIP_FUZZ=1. About 3.5 min on 2 cores with the default 33 s
# per target (TG_FUZZ_SECONDS; 5 targets, TG_JOBS at a time: 99 s): the build takes the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${TG_JOBS:-2}
seconds=${TG_FUZZ_SECONDS:-33}
cxx=${TG_FUZZ_CXX:-$(command -v clang++-14 || command -v clang++ || true)}
[ -n "$cxx" ] || { echo "fuzz.sh: clang++ not found (Debian: clang-14 libclang-rt-14-dev)" >&2; exit 1; }
out=build/fuzz
start=$SECONDS
step() { echo "== fuzz [$((SECONDS - start)) s]: $*"; }

step "build with $cxx"
cmake -S tests/fuzz -B "$out" -DCMAKE_CXX_COMPILER="$cxx" >/dev/null
cmake --build "$out" -j"$jobs" >/dev/null
export OPENBLAS_NUM_THREADS=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
rm -rf "$out/seeds"
"$out/fuzz_seeds" "$out/seeds" >/dev/null

# One target: fuzz, then replay its corpus under UBSan; what it prints goes to $out/$target.out,
# and it exits non-zero on a finding.
fuzz_one() {
  local target=$1 corpus=$out/corpus/$1 artifacts=$out/artifacts/$1 failed=0
  rm -rf "$artifacts"
  mkdir -p "$corpus" "$artifacts"
  local dict=()
  case $target in
    load_module | load_optimizer) dict=(-dict=tests/fuzz/tgsv.dict) ;;
    load_safetensors) dict=(-dict=tests/fuzz/safetensors.dict) ;;
    load_pt) dict=(-dict=tests/fuzz/pt.dict) ;;
  esac
  step "$target: fuzz for $seconds s"
  # -timeout: one input taking 10 s is a finding (a reader stuck in a loop); -rss_limit_mb also
  # limits every single allocation, so a huge allocation from a crafted size is one too.
  if ! "$out/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" \
      "$corpus" "$out/seeds/$target" >"$out/$target.log" 2>&1; then
    tail -n 60 "$out/$target.log"
    failed=1
  else
    grep -E '^stat::(number_of_executed_units|new_units_added)' "$out/$target.log" | tr '\n' ' '
    echo
  fi
  step "$target: replay $(find "$corpus" "$out/seeds/$target" -type f | wc -l) inputs under UBSan"
  if ! "$out/fuzz_$target" -runs=0 -artifact_prefix="$artifacts/" "$corpus" "$out/seeds/$target" \
      >"$out/$target.replay.log" 2>&1; then
    tail -n 40 "$out/$target.replay.log"
    failed=1
  fi
  for crash in "$artifacts"/*; do
    [ -f "$crash" ] || continue
    echo "finding: $crash (reproduce: $out/fuzz_$target $crash)"
    od -A d -t x1 "$crash" | head -n 40
    failed=1
  done
  return $failed
}

# The targets run $jobs at a time (each fuzzer is one process on one core), their reports
# printed in order once each is done.
targets=(idx load_module load_optimizer load_safetensors load_pt)
failed=0
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  pids=()
  for target in "${targets[@]:i:jobs}"; do
    fuzz_one "$target" >"$out/$target.out" 2>&1 &
    pids+=($!)
  done
  k=0
  for target in "${targets[@]:i:jobs}"; do
    wait "${pids[k]}" || failed=1
    cat "$out/$target.out"
    k=$((k + 1))
  done
done
[ "$failed" = 0 ] || { echo "fuzz.sh: findings above" >&2; exit 1; }
step "no findings"
