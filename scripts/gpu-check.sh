#!/usr/bin/env bash
# The GPU machine's check, in one command (device tool): build for Hopper, print gshmem-info, run ring on 2 GPUs
# with init timing, then every GPU-labelled test (CTEST_ARGS: more ctest options, e.g. "-E sanitize"). PES=<n>: GPUs
# for the ring; the GPU tests run at 2 and at n. Logs go to $OUT (or ./gpu-check-out).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-check-out}
mkdir -p "$out"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
rc=0
step() { echo "=== $*"; }
# ring's output in $1 must hold one PASS per PE and no FAIL.
ring_ok() { local n; n=$(grep -c 'PASS' "$1"); echo "$n PASS lines"; [ "$n" = "${PES:-2}" ] && ! grep -q FAIL "$1"; }
step "configure + build ($(date -u +%FT%TZ), commit ${GSHMEM_COMMIT:-$(git -C "$root" rev-parse --verify -q --short HEAD 2>/dev/null || echo unknown)})"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGSHMEM_CUDA_ARCHITECTURES=90 -DGSHMEM_GPU_TESTS=ON \
  "-DGSHMEM_GPU_TEST_PES=$(echo 2 ${PES:-2} | tr " " "\n" | sort -nu | paste -sd";")" \
  >"$out/configure.log" 2>&1 || { tail -50 "$out/configure.log"; exit 1; }
cmake --build "$root/build" -j"$(nproc)" >"$out/build.log" 2>&1 || { grep -E 'error' -A3 "$out/build.log" | head -80; exit 1; }
step "nvidia-smi topo"; nvidia-smi topo -m 2>&1 | head -8
step "gshmem-info"; "$root/build/bin/gshmem-info" | tee "$out/info.txt"
step "ring on ${PES:-2} GPUs"
GSHMEM_DEBUG=INFO "$root/build/bin/gshmemrun" -n "${PES:-2}" -- "$root/build/bin/ring" 2>&1 | tee "$out/ring.txt"
ring_ok "$out/ring.txt" || rc=1
for i in 1 2 3 4 5; do
  GSHMEM_DEBUG=INFO "$root/build/bin/gshmemrun" -n "${PES:-2}" -- "$root/build/bin/ring" 2>&1 | grep -o 'in [0-9.]* ms'
done | tee "$out/init_ms.txt"
step "ring under mpirun and torchrun"
mpirun --allow-run-as-root --oversubscribe -np "${PES:-2}" "$root/build/bin/ring" >"$out/ring_mpirun.txt" 2>&1
ring_ok "$out/ring_mpirun.txt" || { rc=1; tail -20 "$out/ring_mpirun.txt"; }
if command -v torchrun >/dev/null; then
  torchrun --nproc-per-node "${PES:-2}" --no-python "$root/build/bin/ring" >"$out/ring_torchrun.txt" 2>&1
  ring_ok "$out/ring_torchrun.txt" || { rc=1; tail -20 "$out/ring_torchrun.txt"; }
fi
step "ctest -L gpu"
(cd "$root/build" && ctest -L gpu ${CTEST_ARGS:-} --output-on-failure --timeout 300) 2>&1 | tee "$out/ctest_gpu.txt" || rc=1
exit $rc
