#!/usr/bin/env bash
# libnvshmem_host.so.3 over gshmem (src/nvshmem_abi) on the GPU machine, from the carried build (PREBUILT=1 of
# gpu-all.sh; BUILD=<dir>, default build-gpu): 1. ctest -R 'nvshmem_dlsym|nvshmem_abi' (CPU and GPU PEs);
# 2. the same C program (tests/compat/nvshmem_dlsym.c) against NVIDIA NVSHMEM 3.4.5's libnvshmem_host.so.3
# (nvidia-nvshmem-cu13 in the machine's Python), a unique ID over MPI, one GPU per rank: what NVIDIA's library answers
# where ours is checked; 3. NVIDIA nvshmem4py 0.4.1 (the wheel in build/wheels) running bench/python/core_bench.py
# over gshmem's library (LD_PRELOAD: cuda.pathfinder then finds it loaded), beside the same over NVIDIA's;
# ABI_N4P_ARGS: core_bench's arguments (default "--sizes 1K,64K,16M --samples 10"), ABI_ROUNDS: alternating rounds
# (gpu-all.sh's ABI_TIMEOUT defaults to 120 s plus 320 s a round). Exit status 1 if any step fails or is skipped.
# Writes $OUT/abi.md and logs. Never uses NVLink multicast.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build-gpu}
out=${OUT:-$root/abi-out}
mkdir -p "$out/logs"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
py=${PYTHON:-python3}
shim=$build/lib/nvshmem_abi/libnvshmem_host.so.3
rc=0
note() { echo "$*" | tee -a "$out/abi.md"; }
note "# nvshmem-abi-gpu.sh: $(date -u +%FT%TZ) commit ${GSHMEM_COMMIT:-unknown}; $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s)"

note "## 1. ctest -R 'nvshmem_dlsym|nvshmem_abi'"
(cd "$build" && ctest -R 'nvshmem_dlsym|nvshmem_abi' --output-on-failure --timeout 120) >"$out/logs/ctest.txt" 2>&1 || rc=1
grep -E 'tests passed|Failed|\*\*\*' "$out/logs/ctest.txt" | tee -a "$out/abi.md"

note "## 2. the same program against NVIDIA's libnvshmem_host.so.3"
nvlib=$("$py" -c 'import nvidia.nvshmem as m, os; print(os.path.join(m.__path__[0], "lib"))' 2>/dev/null)
if [[ -n $nvlib && -f $nvlib/libnvshmem_host.so.3 ]]; then
  # one GPU per rank, its context current before init (DLSYM_CUDA: NVIDIA's library needs one)
  wrap='CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${PMI_LOCAL_RANK:-0}}} exec "$0" "$@"'
  LD_LIBRARY_PATH=$nvlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} DLSYM_INIT=uid DLSYM_CUDA=1 timeout 90 mpirun \
    --allow-run-as-root -np 2 -x LD_LIBRARY_PATH -x DLSYM_INIT -x DLSYM_CUDA -x NVSHMEM_DISABLE_NVLS sh -c "$wrap" \
    "$build/tests/compat/compat_nvshmem_dlsym_mpi" >"$out/logs/nvidia_uid.txt" 2>&1
  s=$?
  note "NVIDIA NVSHMEM ($nvlib), DLSYM_INIT=uid, mpirun -np 2: status $s"
  [[ $s -eq 0 ]] || rc=1
  grep -E 'PASS|FAIL' "$out/logs/nvidia_uid.txt" | head -6 | tee -a "$out/abi.md"
else
  note "no nvidia.nvshmem in $py: step 2 skipped"
  rc=1
fi

note "## 3. nvshmem4py 0.4.1 over gshmem's library (LD_PRELOAD) and over NVIDIA's"
# what PyTorch's own NVSHMEM code imports from libnvshmem_host.so.3, and which of those gshmem's library lacks
tlib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
for f in "$tlib"/*.so*; do
  nm -D --undefined-only "$f" 2>/dev/null | awk '{print $2}' | grep -E '^nvshmem' | sed "s|^|$(basename "$f") |"
done >"$out/logs/torch_nvshmem_imports.txt"
nm -D --defined-only "$shim" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$out/logs/shim_exports.txt"
# Only names bound to version NVSHMEM come from libnvshmem_host.so.3; an unversioned one is a weak reference that
# NVIDIA's library does not export either (PyTorch's `extern "C" void nvshmem_init() __attribute__((weak))`, its
# "is NVSHMEM linked in?" test, which falls back to dlopen).
note "PyTorch's imports from libnvshmem_host.so.3: $(grep -c '@NVSHMEM' "$out/logs/torch_nvshmem_imports.txt") ($(cut \
  -d' ' -f1 "$out/logs/torch_nvshmem_imports.txt" | sort -u | tr '\n' ' ')); not exported by gshmem's: $(cut -d' ' \
  -f2 "$out/logs/torch_nvshmem_imports.txt" | grep '@NVSHMEM' | sed 's/@.*//' | sort -u | comm -23 - \
  "$out/logs/shim_exports.txt" | tr '\n' ' ')(unversioned, weak: $(cut -d' ' -f2 "$out/logs/torch_nvshmem_imports.txt" \
  | grep -v '@' | sort -u | tr '\n' ' '))"
pytag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
wheel=$(compgen -G "$root/build/wheels/nvshmem4py_cu13-0.4.1-$pytag-*.whl" | head -1)
n4p=$(mktemp -d /tmp/gshmem-n4p.XXXXXX)
trap 'rm -rf "$n4p"' EXIT
if [[ -z $wheel ]] || ! "$py" -m pip install -q --disable-pip-version-check --no-deps --no-index --target "$n4p" "$wheel"; then
  note "no nvshmem4py wheel for $pytag in build/wheels (carry build/wheels): step 3 skipped"
  rc=1
else
  read -r -a n4p_args <<<"${ABI_N4P_ARGS:---sizes 1K,64K,16M --samples 10}"
  for ((round = 1; round <= ${ABI_ROUNDS:-1}; round++)); do
    for who in gshmem nvidia; do
      pre=() tag=$who$([[ ${ABI_ROUNDS:-1} -gt 1 ]] && echo "-$round")
      # INFO on gshmem's side only: its init lines show that gshmem served the run (costs well under 1 ms)
      [[ $who == gshmem ]] && pre=(env "LD_PRELOAD=$shim" GSHMEM_DEBUG=INFO)
      PYTHONPATH=$n4p timeout -k 10 150 "${pre[@]}" "$py" -m torch.distributed.run --standalone --nproc-per-node=2 \
        "$root/bench/python/core_bench.py" --lib nvshmem "${n4p_args[@]}" --json "$out/n4p_$tag.json" \
        >"$out/logs/n4p_$tag.txt" 2>&1
      s=$?
      note "nvshmem4py over $who (round $round): status $s"
      [[ $s -eq 0 ]] || rc=1
      grep -E '^(core_bench|  )' "$out/logs/n4p_$tag.txt" | head -30 | tee -a "$out/abi.md"
      [[ $s -eq 0 ]] || { grep -E 'Error|error|rank[0-9]' "$out/logs/n4p_$tag.txt" | tail -12 | tee -a "$out/abi.md"; }
      [[ $who == gshmem && $round == 1 ]] && { grep -m3 -E 'gshmem.*INFO' "$out/logs/n4p_$tag.txt" | tee -a "$out/abi.md"; }
    done
  done
fi
exit $rc
