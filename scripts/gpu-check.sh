#!/usr/bin/env bash
# The GPU machine's check, in one command (device tool): build for Hopper, print gshmem-info, run ring on 2 GPUs
# with init timing, then every GPU-labelled test (CTEST_ARGS: more ctest options, e.g. "-E sanitize"). PES=<n>: GPUs
# for the ring; the GPU tests run at 2 and at n. Logs go to $OUT (or ./gpu-check-out). PREBUILT=1: no build; use
# build-gpu/ made on the build machine and carried (scripts/gpu-prebuilt.sh; gpu-all.sh unpacks it).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-check-out}
mkdir -p "$out"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
build=$root/build
[ -n "${PREBUILT:-}" ] && build=$root/build-gpu
rc=0
step() { echo "=== $*"; }
# ring's output in $1 must hold one PASS per PE and no FAIL.
ring_ok() { local n; n=$(grep -c 'PASS' "$1"); echo "$n PASS lines"; [ "$n" = "${PES:-2}" ] && ! grep -q FAIL "$1"; }
if [ -n "${PREBUILT:-}" ]; then
  step "prebuilt: $(tr '\n' ' ' <"$build/prebuilt.txt" 2>/dev/null) ($(date -u +%FT%TZ))"
  [ -x "$build/bin/gshmemrun" ] || { echo "gpu-check.sh: PREBUILT=1 but $build/bin/gshmemrun is missing"; exit 1; }
  built_pes=$(sed -n 's/^pes=//p' "$build/prebuilt.txt")
  [ " $built_pes " = " $(echo 2 "${PES:-2}" | tr " " "\n" | sort -nu | paste -sd" ") " ] ||
    echo "gpu-check.sh: WARN: build-gpu's GPU tests run at ${built_pes:-?} PEs, not ${PES:-2}: pack with PES=${PES:-2}"
  export LD_LIBRARY_PATH=$build/lib:$build/prebuilt-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  commit=${GSHMEM_COMMIT:-$(git -C "$root" rev-parse --verify -q --short HEAD 2>/dev/null || echo unknown)}
  step "configure + build ($(date -u +%FT%TZ), commit $commit)"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGSHMEM_CUDA_ARCHITECTURES=90 \
    -DGSHMEM_GPU_TESTS=ON \
    "-DGSHMEM_GPU_TEST_PES=$(echo 2 ${PES:-2} | tr " " "\n" | sort -nu | paste -sd";")" \
    >"$out/configure.log" 2>&1 || { tail -50 "$out/configure.log"; exit 1; }
  cmake --build "$build" -j"$(nproc)" >"$out/build.log" 2>&1 ||
    { grep -E 'error' -A3 "$out/build.log" | head -80; exit 1; }
fi
step "nvidia-smi topo"; nvidia-smi topo -m 2>&1 | head -8
step "gshmem-info"; "$build/bin/gshmem-info" | tee "$out/info.txt"
step "ring on ${PES:-2} GPUs"
GSHMEM_DEBUG=INFO "$build/bin/gshmemrun" -n "${PES:-2}" -- "$build/bin/ring" 2>&1 | tee "$out/ring.txt"
ring_ok "$out/ring.txt" || rc=1
for i in 1 2 3 4 5; do
  GSHMEM_DEBUG=INFO "$build/bin/gshmemrun" -n "${PES:-2}" -- "$build/bin/ring" 2>&1 | grep -o 'in [0-9.]* ms'
done | tee "$out/init_ms.txt"
step "ring under mpirun and torchrun"
mpirun --allow-run-as-root --oversubscribe -np "${PES:-2}" "$build/bin/ring" >"$out/ring_mpirun.txt" 2>&1
ring_ok "$out/ring_mpirun.txt" || { rc=1; tail -20 "$out/ring_mpirun.txt"; }
if command -v torchrun >/dev/null; then
  torchrun --nproc-per-node "${PES:-2}" --no-python "$build/bin/ring" >"$out/ring_torchrun.txt" 2>&1
  ring_ok "$out/ring_torchrun.txt" || { rc=1; tail -20 "$out/ring_torchrun.txt"; }
fi
step "ctest -L gpu"
(cd "$build" && ctest -L gpu ${CTEST_ARGS:-} --output-on-failure --timeout 300) 2>&1 | tee "$out/ctest_gpu.txt" || rc=1
exit $rc
