#!/usr/bin/env bash
# Runs the device-API GPU programs under compute-sanitizer (memcheck, then racecheck), every PE under the tool:
#   gshmemrun -n 2 -- compute-sanitizer --tool memcheck prog
# Usage: sanitize.sh GSHMEMRUN DEVICE_API ORDERING COLLECTIVE_LAUNCH RING_TWO_TU [COLLECTIVES]
# (COLLECTIVES: tests/mp's mp_collectives_gpu, run with its device block-scope reduction and maxloc cases)
# Exit: 0 clean, 1 any reported error or failed program, 77 no GPU / no compute-sanitizer (CTest: skipped).
# Environment: GSHMEM_SANITIZE_NPES (default 2), GSHMEM_SANITIZE_TOOLS (default "memcheck racecheck"),
# GSHMEM_SANITIZE_LOG_DIR (keep the logs there; default a temporary folder), GSHMEM_SANITIZE_TIMEOUT (seconds per
# program run, default 150), CUDA_BIN_DIR (where to look first).
set -u
if [ $# -ne 5 ] && [ $# -ne 6 ]; then
  echo "usage: $0 GSHMEMRUN DEVICE_API ORDERING COLLECTIVE_LAUNCH RING_TWO_TU [COLLECTIVES]" >&2
  exit 2
fi
run=$1 device_api=$2 ordering=$3 launch=$4 ring=$5 coll=${6:-}
npes=${GSHMEM_SANITIZE_NPES:-2}
tools=${GSHMEM_SANITIZE_TOOLS:-memcheck racecheck}

if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIP: no NVIDIA GPU here"
  exit 77
fi
cs=""
for c in "${CUDA_BIN_DIR:-}/compute-sanitizer" "$(command -v compute-sanitizer 2>/dev/null)" \
         /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
  if [ -n "$c" ] && [ -x "$c" ]; then cs=$c; break; fi
done
if [ -z "$cs" ]; then
  echo "SKIP: compute-sanitizer not found (install the CUDA toolkit's compute-sanitizer or set CUDA_BIN_DIR)"
  exit 77
fi
logdir=${GSHMEM_SANITIZE_LOG_DIR:-$(mktemp -d)}
mkdir -p "$logdir"
# Spins are slower under the tools: a generous device timeout, fewer ordering rounds, quick mode (one type in a few
# per operation family; every operation and scope still runs).
export GSHMEM_DEVICE=gpu GSHMEM_WAIT_TIMEOUT=${GSHMEM_WAIT_TIMEOUT:-60} GSHMEM_BOOTSTRAP_TIMEOUT=120 GSHMEM_TEST_QUICK=1
per_run=${GSHMEM_SANITIZE_TIMEOUT:-150}
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
echo "compute-sanitizer: $cs ($("$cs" --version | tail -1)); $npes PEs; logs in $logdir"

status=0
for tool in $tools; do
  progs=("$device_api" "$ordering 200" "$launch" "$ring")
  [ -n "$coll" ] && progs+=("$coll --only=reduce_device_block,maxloc_block,alltoalls_device")
  for prog in "${progs[@]}"; do
    name=$(basename "${prog%% *}")
    log="$logdir/${name}.${tool}.log"
    start=$(date +%s)
    # shellcheck disable=SC2086
    timeout "$per_run" "$run" -n "$npes" -- "$cs" --tool "$tool" --error-exitcode 99 --print-limit 20 $prog >"$log" 2>&1
    rc=$?
    errors=$(grep -E "ERROR SUMMARY: [0-9]+ error" "$log" | grep -vc "ERROR SUMMARY: 0 error")
    hazards=$(grep -E "RACECHECK SUMMARY: [0-9]+ hazard" "$log" | grep -vc "RACECHECK SUMMARY: 0 hazard")
    verdict=ok
    if [ "$rc" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$hazards" -ne 0 ]; then
      verdict=FAILED
      status=1
    fi
    printf '%-10s %-24s rc=%-3s %3ss  %s\n' "$tool" "$name" "$rc" "$(( $(date +%s) - start ))" "$verdict"
    grep -E "SUMMARY|checks," "$log" | sed 's/^/    /'
    if [ "$verdict" = FAILED ]; then
      echo "---- last lines of $log ----"
      tail -40 "$log"
    fi
  done
done
exit $status
