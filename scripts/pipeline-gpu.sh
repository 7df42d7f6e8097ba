#!/usr/bin/env bash
# The pipeline-parallel example's tokens/s on GPU PEs, gshmem beside torch.distributed over NCCL (issue 18, item 4):
# examples/python/pipeline_train.py under torchrun, one stage per GPU, for each configuration below (small
# micro-batches first: there communication latency matters; with --graphs each stage's step is a CUDA graph, so the
# host's launches no longer hide the transfers), ROUNDS times each. Each run trains with both transports
# from one seed and checks that their losses and final parameters are bit-identical; this script keeps its console
# and collects the tokens/s into table.md.
#   PYTHON=python3   a python that imports torch and gshmem.core (scripts/gpu-all.sh STEPS=pipeline installs it)
#   PES=<n>          stages (default: the GPU count, at least 2)
#   ROUNDS=2         runs of each configuration (the example runs gshmem first, then NCCL; a second round shows
#                    how much the order and the run matter)
#   CONFIGS          ";"-separated pipeline_train.py argument lists (default below)
#   OUT=<dir>        default ./pipeline-out: table.md, logs/<n>.txt, log.txt
#   BUDGET_S=540     no run starts after this many seconds
# Never uses NVLink multicast.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
out=${OUT:-$root/pipeline-out}
deadline=$((SECONDS + ${BUDGET_S:-540}))
mkdir -p "$out/logs"
exec > >(tee -a "$out/log.txt") 2>&1
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export GSHMEM_DEVICE=${GSHMEM_DEVICE:-gpu} GSHMEM_WAIT_TIMEOUT=${GSHMEM_WAIT_TIMEOUT:-60}

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
pes=${PES:-$((ngpu > 2 ? ngpu : 2))}
rounds=${ROUNDS:-2}
default_configs="--micro-batch-size 1 --micro-batches 16 --steps 24 --warmup 4;\
--micro-batch-size 1 --micro-batches 16 --steps 24 --warmup 4 --schedule 1f1b;\
--micro-batch-size 1 --micro-batches 16 --steps 24 --warmup 4 --graphs;\
--micro-batch-size 1 --micro-batches 16 --steps 24 --warmup 4 --schedule 1f1b --graphs;\
--micro-batch-size 4 --micro-batches 8 --steps 16 --warmup 4;\
--micro-batch-size 16 --micro-batches 8 --hidden 1024 --layers 8 --seq 256 --steps 12 --warmup 3"
IFS=';' read -r -a configs <<<"${CONFIGS:-$default_configs}"
echo "pipeline-gpu.sh: $(date -u +%FT%TZ) commit ${GSHMEM_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null \
     || echo unknown)}; $pes stages on $ngpu GPU(s); $rounds round(s) of ${#configs[@]} configuration(s)"
nvidia-smi --query-gpu=index,name --format=csv,noheader || true

rows=() failed=0 run=0
for ((r = 1; r <= rounds; ++r)); do
  for cfg in "${configs[@]}"; do
    run=$((run + 1))
    left=$((deadline - SECONDS))
    if ((left < 30)); then
      echo "pipeline-gpu.sh: out of time before run $run ($cfg)"
      failed=1
      break 2
    fi
    log=$out/logs/$run.txt
    # shellcheck disable=SC2086 (each configuration is a list of arguments)
    timeout "$((left < 240 ? left : 240))" "$py" -m torch.distributed.run --standalone --nproc-per-node="$pes" \
      "$root/examples/python/pipeline_train.py" $cfg >"$log" 2>&1
    s=$?
    g=$(sed -n 's/^  gshmem: \([0-9]*\) tokens\/s.*/\1/p' "$log" | head -1)
    t=$(sed -n 's/^  \(nccl\|gloo\): \([0-9]*\) tokens\/s.*/\2/p' "$log" | head -1)
    same=$(grep -c 'losses bit-identical' "$log")
    # how each transport's steps ran: eager, CUDA graphs, or why not graphs (the example's tokens/s lines)
    modes=$(sed -n 's/^  \(gshmem\|nccl\|gloo\): [0-9]* tokens\/s over steps [0-9.]*, \(.*\)/\2/p' "$log" | paste -sd/ -)
    verdict=$(grep -oE 'pipeline: (ok|FAILED)' "$log" | tail -1)
    [[ $s -eq 0 && $verdict == "pipeline: ok" ]] || failed=1
    ratio=-
    [[ -n $g && -n $t && $t != 0 ]] && ratio=$(awk -v a="$g" -v b="$t" 'BEGIN { printf "%.2f", a / b }')
    rows+=("| $r | \`$cfg\` | ${g:--} | ${t:--} | $ratio | ${modes:--} | $([[ $same -gt 0 ]] && echo yes || echo no) | ${verdict:-status $s} |")
    echo "run $run (round $r): $cfg -> gshmem ${g:--} tokens/s, NCCL ${t:--}, ratio $ratio, exit $s"
    [[ $s -eq 0 ]] || tail -20 "$log"
  done
done
{
  echo "pipeline_train.py, $pes stages, tokens/s of the timed steps (last stage's figures); ratio above 1: gshmem faster"
  echo
  echo "| round | arguments | gshmem | NCCL | gshmem / NCCL | steps (gshmem / NCCL) | losses bit-identical | result |"
  echo "|---|---|---:|---:|---:|---|---|---|"
  printf '%s\n' "${rows[@]}"
} >"$out/table.md"
cat "$out/table.md"
exit $failed
