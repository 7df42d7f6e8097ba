#!/usr/bin/env bash
# On the GPU machine (2+ GPUs), one command: which case of mp_collectives_gpu hangs or fails at 2 PEs, and under
# which settings it stops doing so (bench/NOTES.md entry 23: a reduction change hung gpu.mp.collectives_dev at 2
# PEs, and ctest, which prints a test's output only when it ends, could not say where). Builds only
# mp_collectives_gpu and gshmemrun, with ptxas at -O1 (correctness, not timing: the full-optimisation build of that
# file took over 6 minutes), then runs each case alone with line-buffered output under a kill timeout. For a case
# still running after HANG_PROBE_S it records GPU utilisation (100 %: a kernel loops; 0 %: a host or launch-order
# wait) and, where gdb exists, each PE's host stack; a case that hangs or fails is run again with one setting
# changed at a time (no overlapped launches, one CTA, no two-shot on the stream forms).
# Writes $OUT/bisect.md (a line per run) and $OUT/log.txt. Never uses NVLink multicast.
#   CASES="..." (default: every case, in the program's order)   CASE_TIMEOUT=45   HANG_PROBE_S=25   PES=2
#   BUDGET_S=520 (no run starts after it)   BUILD=<dir> (default build-bisect)   NO_BUILD=1: use BUILD's binaries as
#   they are (a warm machine's second call; or a mock of both binaries to try this script without a GPU)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/coll-bisect-out}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH GSHMEM_DEVICE=gpu GSHMEM_WAIT_TIMEOUT=20 GSHMEM_BOOTSTRAP_TIMEOUT=30
export MPT_TRACE=1  # the branch's test names each reduction call on stderr before it starts (the last one hung)
# It bisects the reduction rewrite parked on branch coll-rw2 (its GSHMEM_COLL_TWO_SHOT_BYTES setting):
# on a tree without it every case passes and the reruns test nothing, so say so instead of spending a GPU call.
if ! grep -q coll_two_shot_bytes "$root/src/runtime/settings.def"; then
  echo "coll-bisect-gpu.sh: this tree has no GSHMEM_COLL_TWO_SHOT_BYTES: it is not the parked reduction rewrite." \
    "Fix: run it from branch coll-rw2 (git checkout coll-rw2), or set FORCE=1"
  [[ ${FORCE:-0} == 1 ]] || exit 2
fi
deadline=$((SECONDS + ${BUDGET_S:-520}))
pes=${PES:-2}
build=${BUILD:-$root/build-bisect}
commit=${GSHMEM_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
echo "coll-bisect-gpu.sh: $(date -u +%FT%TZ) commit $commit, $pes PEs"
t0=$SECONDS
[[ ${NO_BUILD:-0} == 1 ]] || {
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGSHMEM_CUDA_ARCHITECTURES=90 -DGSHMEM_BUILD_EXAMPLES=OFF \
  -DCMAKE_CUDA_FLAGS="-Xptxas -O1" >"$out/configure.txt" 2>&1 || { tail -20 "$out/configure.txt"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target mp_collectives_gpu gshmemrun >"$out/build.txt" 2>&1 ||
  { grep -E 'error' -A3 "$out/build.txt" | head -40; exit 1; }
}
echo "build: $((SECONDS - t0)) s"
prog=$build/tests/mp/mp_collectives_gpu
run=$build/bin/gshmemrun
# The reductions first (the rewrite's code), then the cases that ran before them in the hung run.
cases=${CASES:-"reduce_on_stream reduce_device_thread reduce_device_warp reduce_device_block
  reduce_float16_host_names alltoalls_device maxloc_block graph_capture on_stream device_thread device_warp
  device_block"}
echo "| case | settings | result | seconds | GPU busy at ${HANG_PROBE_S:-25} s |" >"$out/bisect.md"
echo "|---|---|---|---|---|" >>"$out/bisect.md"

# one CASE [VAR=value ...]: runs the case once; prints and records ok / FAILED (status) / HUNG (still running at
# its limit, then killed) / CUT (the budget's shorter limit was reached: slow, not necessarily hung).
one() {
  local c=$1
  shift
  local limit=${CASE_TIMEOUT:-45} probe=${HANG_PROBE_S:-25} busy="-" start=$SECONDS
  local log="$out/case-$c-$(tr -c 'A-Za-z0-9_' _ <<<"${*:-defaults}").txt"
  if ((SECONDS + 10 > deadline)); then echo "== $c $*: skipped (BUDGET_S spent)"; return 2; fi
  local cut=0
  ((SECONDS + limit > deadline)) && { limit=$((deadline - SECONDS)); cut=1; }
  echo "== $c ${*:-(defaults)}"
  env "$@" timeout -s KILL "$limit" stdbuf -oL -eL "$run" -n "$pes" -- "$prog" --expect-npes="$pes" --only="$c" \
    >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null && ((SECONDS - start < probe)); do sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then
    busy=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader | paste -sd/ -)
    if command -v gdb >/dev/null; then
      # The PEs only (argv[0] is the program; timeout's and gshmemrun's argv hold it later), each attach bounded.
      for p in $(pgrep -f "^$prog "); do
        echo "-- host stack of pid $p"
        timeout 10 gdb -p "$p" -batch -ex 'thread apply all bt' >"$out/gdb-$p.txt" 2>&1 ||
          echo "(gdb failed or timed out: $(tail -1 "$out/gdb-$p.txt"))"
        grep -E '^#[0-9]+ ' "$out/gdb-$p.txt" | head -25
      done
    else
      echo "-- (no gdb here: no host stacks)"
    fi
  fi
  wait "$pid"
  local s=$? result=ok took=$((SECONDS - start))
  if ((s != 0)); then
    result="FAILED ($s)"
    # timeout's SIGKILL at the limit (gshmemrun also ends with 137 when one of its PEs is killed: not a hang)
    ((s == 137 && took + 1 >= limit)) && { ((cut)) && result=CUT || result=HUNG; }
  fi
  local rc=1
  [[ $result == ok ]] && rc=0
  sleep 2  # the killed PEs' GPU contexts go before the next case starts
  tail -6 "$log"
  echo "-- $c: $result in $took s"
  echo "| $c | ${*:-defaults} | $result | $took | $busy |" >>"$out/bisect.md"
  return $rc
}

status=0
for c in $cases; do
  one "$c" && continue
  status=1
  one "$c" GSHMEM_STREAM_OVERLAP=0
  one "$c" GSHMEM_COLL_CTAS=1
  one "$c" GSHMEM_COLL_TWO_SHOT_BYTES=1T
done
cat "$out/bisect.md"
exit $status
