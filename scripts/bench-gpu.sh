#!/usr/bin/env bash
# gshmem vs NVIDIA NVSHMEM 3.4.5 on the GPU machine (nvidia-h200-x2), one command:
#   scripts/bench-gpu.sh [build|run|all]        (default all; results to $OUT, or ./bench-out-gpu)
# Builds gshmem-bench against gshmem (in-tree, plain nvcc, no -rdc) and the same bench/ source against NVIDIA
# NVSHMEM (standalone bench/CMakeLists.txt, -rdc, the pip package nvidia-nvshmem-cu13 found with python3), runs
# both on 2 GPUs with the same options and the same unique-id bootstrap, measures init in extra processes (cold
# and with the CUDA context made first), merges the JSON side by side (bench/merge.py) and plots it
# (bench/plot.py, if matplotlib is there). Files in $OUT (at most 8): <date>-<device>.json (merged, for
# bench/results/), <date>-<device>.png, table.txt, gshmem.json, nvshmem.json, log.txt.
# Options for both runs can be added in BENCH_ARGS; QUICK=1 runs a shorter sweep. Never uses NVLink multicast.
# shellcheck disable=SC2054,SC2206  # commas are inside option values; BENCH_ARGS is split on purpose
set -euo pipefail
phase=${1:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/bench-out-gpu}
mkdir -p "$out"
work=$(mktemp -d /tmp/gshmem-bench.XXXXXX)
log=$out/log.txt
exec > >(tee -a "$log") 2>&1
jobs=$(nproc)

# No multicast anywhere (KINDS.md): NVSHMEM's NVLS, NCCL's, torch's.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
# NVSHMEM's unique-id bootstrap over loopback, no remote transport (one node).
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_REMOTE_TRANSPORT=none
# Room for two 1 GiB buffers plus the 1 GiB malloc row.
export NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-4G} GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-4G}
export GSHMEM_DEVICE=gpu GSHMEM_WAIT_TIMEOUT=${GSHMEM_WAIT_TIMEOUT:-60}

gbuild=$root/build-bench-gshmem
nbuild=$root/build-bench-nvshmem
# The device machine gets the tree without .git: pass GSHMEM_COMMIT=<hash> there.
commit=${GSHMEM_COMMIT:-$(git -C "$root" rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}
echo "bench-gpu.sh: $(date -u +%FT%TZ) commit $commit on $(hostname)"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader || true

build() {
  cmake -S "$root" -B "$gbuild" -DCMAKE_BUILD_TYPE=Release -DGSHMEM_CUDA_ARCHITECTURES=90 \
        -DGSHMEM_BUILD_TESTS=OFF -DGSHMEM_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$gbuild" -j "$jobs" --target gshmem-bench gshmemrun
  local nvhome
  nvhome=$(python3 -c 'import nvidia.nvshmem as m; print(m.__path__[0])')
  echo "NVSHMEM from $nvhome"
  cmake -S "$root/bench" -B "$nbuild" -DCMAKE_BUILD_TYPE=Release -DBENCH_BACKEND=nvshmem -DNVSHMEM_HOME="$nvhome" \
        -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  cmake --build "$nbuild" -j "$jobs"
}

# launch2 NAME BINARY ARGS...: 2 PEs by unique id through a file; fails if either PE fails.
launch2() {
  local name=$1 bin=$2
  shift 2
  local uid=$work/uid.$name pids=() rc=0
  rm -f "$uid"
  for r in 0 1; do
    BENCH_RANK=$r BENCH_NRANKS=2 timeout 480 "$bin" --uid-file "$uid" --commit "$commit" "$@" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  [[ $rc -eq 0 ]] || echo "bench-gpu.sh: $name failed (status $rc)"
  return $rc
}

run() {
  local gbin=$gbuild/bin/gshmem-bench nbin=$nbuild/nvshmem-bench
  local args=(--suite all --sizes 16:1G:4 --ctas 1,8,32,132 --threads 1024 --repeats 10 --warmup 2
              --lat-iters 1000 --signal-sizes 8,64,512,4K,32K,64K,256K,1M --malloc-sizes 1M,64M,1G)
  if [[ ${QUICK:-0} == 1 ]]; then
    args=(--suite all --sizes 16:1G:16 --ctas 1,8,32 --repeats 5 --warmup 1 --lat-iters 500
          --signal-sizes 8,4K,64K --malloc-sizes 1M,1G)
  fi
  args+=(${BENCH_ARGS:-})
  local gi=() ni=() status=0
  launch2 gshmem "$gbin" "${args[@]}" --json "$out/gshmem.json" || status=1
  launch2 nvshmem "$nbin" "${args[@]}" --json "$out/nvshmem.json" || status=1
  # init: one figure per process, so extra processes for each library, cold and with the context made first.
  for i in 1 2 3; do
    for mode in cold preinit; do
      local extra=()
      [[ $mode == preinit ]] && extra=(--cuda-preinit)
      launch2 "gshmem-init-$mode$i" "$gbin" --suite init --no-table "${extra[@]}" \
              --json "$work/gshmem-init-$mode$i.json" && gi+=("$work/gshmem-init-$mode$i.json")
      launch2 "nvshmem-init-$mode$i" "$nbin" --suite init --no-table "${extra[@]}" \
              --json "$work/nvshmem-init-$mode$i.json" && ni+=("$work/nvshmem-init-$mode$i.json")
    done
  done
  local dev
  dev=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | tr 'A-Z ' 'a-z-' | sed 's/nvidia-//')
  local stem
  stem=$(date -u +%F)-${dev:-gpu}-x2
  local libs=()
  [[ -s $out/gshmem.json ]] && libs+=(--lib gshmem "$out/gshmem.json" "${gi[@]}")
  [[ -s $out/nvshmem.json ]] && libs+=(--lib nvshmem "$out/nvshmem.json" "${ni[@]}")
  if [[ ${#libs[@]} -gt 0 ]]; then
    python3 "$root/bench/merge.py" "${libs[@]}" -o "$out/$stem.json" > "$out/table.txt"
    cat "$out/table.txt"
    python3 "$root/bench/plot.py" "$out/$stem.json" -o "$out/$stem.png" || echo "bench-gpu.sh: no plot (see above)"
  fi
  return $status
}

case $phase in
  build) build ;;
  run) run ;;
  all) build && run ;;
  *) echo "usage: $0 [build|run|all]"; exit 2 ;;
esac
