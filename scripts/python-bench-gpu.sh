#!/usr/bin/env bash
# gshmem.core beside nvshmem4py 0.4.1 (over NVIDIA NVSHMEM 3.4.5) and torch.distributed (NCCL), from Python, on a
# GPU machine (issue 17): bench/python/core_bench.py under torchrun for each library, one after the other, then
# extra processes that measure import+init, then bench/python/merge.py. A library that fails or runs out of time
# is logged and the others still run. Files in $OUT: table.md (the merged table), <lib>.json (main runs),
# init/*.json (init runs), logs/<run>.txt (each run's console), log.txt (this script's).
#   PYTHON=python3         a python that imports torch and gshmem.core (the caller installs gshmem; PYTHONPATH is
#                          passed on to every run)
#   NVSHMEM4PY_WHEEL=<whl> nvshmem4py-cu13 0.4.1 built for $PYTHON (default: build/wheels/nvshmem4py_cu13-0.4.1-
#                          cp<XY>-*.whl); installed with pip --no-deps --target into a temporary folder, which is on
#                          PYTHONPATH for the nvshmem runs only (its dependencies, nvidia-nvshmem-cu13 and cuda-core,
#                          must be there already)
#   PES=<n>                ranks (default: the GPU count, at least 1); rank r uses GPU r % GPU count
#   OUT=<dir>              default ./bench-out-python
#   LIBS="gshmem nvshmem torch"  which libraries, in this order
#   LIB_TIMEOUT=180        seconds for one main run (init runs: 90)
#   INIT_RUNS=2            rounds of init runs: per library import_init with CUDA up and /cold, plus gshmem's
#                          init() from the environment (/env, /env/cold); 0: none (the main runs still measure one)
#   BENCH_ARGS             more core_bench.py options for the main runs (e.g. "--sizes 1K,1M --samples 10")
#   BUDGET_S=540           no run starts after this many seconds from the start, and each run's timeout is cut to
#                          what is left, so the merge happens within one 10-minute device call
#   GSHMEM_COMMIT=<hash>   recorded in the JSON (the device machine gets the tree without .git)
# Never uses NVLink multicast.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
out=${OUT:-$root/bench-out-python}
budget=${BUDGET_S:-540}
deadline=$((SECONDS + budget))
mkdir -p "$out/logs" "$out/init"
exec > >(tee -a "$out/log.txt") 2>&1
work=$(mktemp -d /tmp/gshmem-pybench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# No multicast anywhere (KINDS.md): NVSHMEM's NVLS, NCCL's, torch's.
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
# NVSHMEM's unique-id bootstrap over loopback; one node, no remote transport.
export NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_REMOTE_TRANSPORT=${NVSHMEM_REMOTE_TRANSPORT:-none}
# Room for the 256 MiB rows (source + destination) in both symmetric heaps (gshmem also reads NVSHMEM_*).
export NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-2G} GSHMEM_SYMMETRIC_SIZE=${GSHMEM_SYMMETRIC_SIZE:-2G}
export GSHMEM_DEVICE=${GSHMEM_DEVICE:-gpu} GSHMEM_WAIT_TIMEOUT=${GSHMEM_WAIT_TIMEOUT:-60}
commit=${GSHMEM_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
export GSHMEM_COMMIT=$commit

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[[ ${ngpu:-0} -gt 0 ]] || ngpu=$("$py" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
pes=${PES:-$((ngpu > 0 ? ngpu : 1))}
libs=${LIBS:-gshmem nvshmem torch}
init_runs=${INIT_RUNS:-2}
for v in "$pes" "$init_runs"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "python-bench-gpu.sh: PES and INIT_RUNS must be numbers, not '$v'"; exit 2; }
done
echo "python-bench-gpu.sh: $(date -u +%FT%TZ) commit $commit on $(hostname); PES=$pes, $ngpu GPU(s);" \
     "LIBS='$libs' INIT_RUNS=$init_runs; python: $("$py" -c 'import sys; print(sys.version.split()[0])')"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader || true
[[ $pes -gt $ngpu ]] && echo "python-bench-gpu.sh: warning: $pes PEs on $ngpu GPU(s) share GPUs: NCCL refuses" \
                              "that and NVSHMEM refuses collectives, so expect torch and nvshmem to fail"
[[ $pes -eq 1 ]] && echo "python-bench-gpu.sh: one PE: only the host us per call (and init, tensor) mean something"

# nvshmem4py into a folder of its own, on PYTHONPATH for its runs only.
n4p=$work/nvshmem4py
if [[ " $libs " == *" nvshmem "* ]]; then
  pytag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  wheel=${NVSHMEM4PY_WHEEL:-$(compgen -G "$root/build/wheels/nvshmem4py_cu13-0.4.1-$pytag-*.whl" | head -1)}
  if [[ -z $wheel || ! -f $wheel ]]; then
    echo "python-bench-gpu.sh: no nvshmem4py wheel for $pytag (NVSHMEM4PY_WHEEL='${NVSHMEM4PY_WHEEL:-}'): no" \
         "nvshmem4py column. Fix: pip download --no-deps --python-version ${pytag#cp3} ... nvshmem4py-cu13==0.4.1"
    libs=${libs//nvshmem/}
  elif ! "$py" -m pip install -q --disable-pip-version-check --no-deps --no-index --target "$n4p" "$wheel"; then
    echo "python-bench-gpu.sh: installing $wheel failed: no nvshmem4py column"
    libs=${libs//nvshmem/}
  else
    nvhome=$("$py" -c 'import nvidia.nvshmem as m; print(m.__path__[0])' 2>/dev/null || echo "(not found)")
    echo "nvshmem4py from $(basename "$wheel"); NVIDIA NVSHMEM (nvidia-nvshmem-cu13) from $nvhome"
  fi
fi

ok=0 failed=()
# bench NAME LIMIT_S LIB ARGS...: core_bench.py for LIB under torchrun with $pes ranks; its console to
# logs/NAME.txt (rank 0's table also here). Returns non-zero on failure, after logging it.
bench() {
  local name=$1 limit=$2 lib=$3 left=$((deadline - SECONDS)) t0=$SECONDS rc
  shift 3
  if [[ $left -lt 15 ]]; then
    echo "python-bench-gpu.sh: $name skipped: the time budget (BUDGET_S=$budget) is spent"
    failed+=("$name (skipped)")
    return 1
  fi
  [[ $limit -gt $left ]] && limit=$left
  local path=${PYTHONPATH:-}
  [[ $lib == nvshmem ]] && path=$n4p${path:+:$path}
  PYTHONPATH=$path timeout -k 10 "$limit" "$py" -m torch.distributed.run --standalone --nproc-per-node="$pes" \
    "$root/bench/python/core_bench.py" --lib "$lib" "$@" >"$out/logs/$name.txt" 2>&1
  rc=$?
  if [[ $rc -eq 0 ]]; then
    echo "python-bench-gpu.sh: $name done in $((SECONDS - t0)) s"
  else
    echo "python-bench-gpu.sh: $name FAILED (status $rc$([[ $rc -ge 124 ]] && echo ", timed out after $limit s"))" \
         "after $((SECONDS - t0)) s; the end of what its ranks printed (logs/$name.txt):"
    { grep -E '^\[rank[0-9]+\]:' "$out/logs/$name.txt" || tail -n 20 "$out/logs/$name.txt"; } | tail -n 12 |
      sed 's/^/    /'
    failed+=("$name")
  fi
  return $rc
}

read -r -a bench_args <<<"${BENCH_ARGS:-}"
for lib in $libs; do
  echo "== $lib"
  if bench "$lib" "${LIB_TIMEOUT:-180}" "$lib" --json "$out/$lib.json" "${bench_args[@]}"; then
    ok=$((ok + 1))
    grep -E '^(core_bench|  )' "$out/logs/$lib.txt" || true
  fi
done

for ((i = 1; i <= init_runs; i++)); do
  for lib in $libs; do
    bench "init-$lib-$i" 90 "$lib" --rows init --json "$out/init/$lib-$i.json"
    bench "init-$lib-cold-$i" 90 "$lib" --rows init --cold-init --json "$out/init/$lib-cold-$i.json"
    if [[ $lib == gshmem ]]; then
      bench "init-$lib-env-$i" 90 "$lib" --rows init --init env --json "$out/init/$lib-env-$i.json"
      bench "init-$lib-env-cold-$i" 90 "$lib" --rows init --init env --cold-init \
        --json "$out/init/$lib-env-cold-$i.json"
    fi
  done
done

mapfile -t files < <(compgen -G "$out/*.json"; compgen -G "$out/init/*.json")
if [[ ${#files[@]} -gt 0 ]]; then
  echo "== merged ($out/table.md)"
  "$py" "$root/bench/python/merge.py" "${files[@]}" -o "$out/table.md" || echo "python-bench-gpu.sh: merge failed"
fi
echo "python-bench-gpu.sh: $ok main run(s) done; failed or skipped: ${failed[*]:-none}; $((SECONDS)) s in all"
[[ $ok -gt 0 ]]
