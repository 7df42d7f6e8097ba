#!/usr/bin/env bash
# Everything the GPU machine proves, in one device call (the device tool brings back at most 8 files, so the logs
# come back as one archive): scripts/gpu-check.sh (build, ring under every launcher, ctest -L gpu),
# scripts/nvshmem-compat.sh (same programs against NVIDIA NVSHMEM 3.4.5 and gshmem), scripts/bench-gpu.sh (side by
# side; QUICK=1 by default here) and, on request, bench/experiments/host_ops_probe. Writes $OUT/all.tgz and prints
# the summaries.
#   STEPS="check compat bench" (the default; "hostops": host_ops_probe, each way of issuing a host put/get/p/g, to
#   the same GPU and to GPU 1; "python": the Python package built with CUDA and its tests on GPU PEs, torch, CuPy,
#   torchrun and mpi4py included, PYTHON_TIMEOUT default 500, PYTEST_K: pytest's -k expression; "pybench":
#   bench/python side by side with nvshmem4py and torch.distributed, scripts/python-bench-gpu.sh, PYBENCH_TIMEOUT
#   default 560; carry build/wheels for nvshmem4py; "peervm": bench/experiments/peer_vm_probe, whether the CUDA
#   driver keeps address space after a peer mapping; "bidir": bench/experiments/bidir_probe, NVLink both ways at once
#   (SM stores / loads / copy engine, allreduce shapes), BIDIR_MIB sizes;
#   "flagprobe": bench/experiments/flag_probe, a signal's wait and set at each memory order, and its SASS;
#   "bcastprobe": bench/experiments/bcast_probe, a broadcast over every GPU of the machine (3 or more) by copy-engine
#   two-shot, copy-engine and SM chains, BCAST_MIB sizes;
#   "abi": scripts/nvshmem-abi-gpu.sh, libnvshmem_host.so.3 over gshmem: its tests, the same C program on NVIDIA's
#   library, nvshmem4py over it (carry build/wheels), ABI_ROUNDS, ABI_TIMEOUT default 120 + 320 a round (PREBUILT:
#   build-gpu);
#   "collsweep": scripts/coll-sweep-gpu.sh, the collectives' CTA split settings side by side, SWEEP_TIMEOUT 560;
#   "collbisect": scripts/coll-bisect-gpu.sh, mp_collectives_gpu case by case at 2 PEs with hang probes,
#   BISECT_TIMEOUT 560; "moe": scripts/moe-gpu.sh, MoE dispatch / combine on GPU PEs: build, ctest -R moe, the Python
#   op's tests on GPU PEs, and bench/moe beside NCCL's all_to_all_single and NVIDIA NVSHMEM, MOE_TIMEOUT default 580;
#   "pipeline": scripts/pipeline-gpu.sh, examples/python/pipeline_train.py's tokens/s with gshmem and with NCCL, one
#   stage per GPU (PES), PIPELINE_TIMEOUT default 560; "collquick": after "check", with its build (no second build,
#   no NVSHMEM): gshmem-bench --suite coll at PES ranks as is, once per COLL_AB item, then as is again, COLL_KINDS
#   (--coll-kinds), COLL_FORMS (default stream), COLL_SIZES (--sizes), QUICK_TIMEOUT per run (default 120))
#   QUICK=0 for the full benchmark sweep; ROUNDS=<n>: each library's main benchmark run n times, alternating (medians)
#   PES=<n> (GPUs for the ring, the benchmark and the GPU tests, which also run at 2; default 2)
#   PES_LIST="2 4 8" (benchmark: barrier/ping-pong rows at each PE count)   CHECK_TIMEOUT=<s> (check step)   BENCH_TIMEOUT=<s> (bench step, default 400)
#   COMPAT_TIMEOUT=<s> (compat step, default 560: it builds gshmem, in the check step's build/ where that exists (a
#   machine kept warm since a check call), and 16 programs x 3 builds, NVSHMEM's with -rdc)
#   GSHMEM_COMMIT=<hash> (the device machine gets the tree without .git)
#   PREBUILT=1: no build on the device: scripts/gpu-prebuilt.sh unpack (the call carries .gpu-prebuilt, made here by
#   `scripts/gpu-prebuilt.sh pack` from the same tree), then check, compat, collquick and collsweep use build-gpu/,
#   and the Python steps (python, pybench, pipeline, moe) the package it built for the device's Python
# Never uses NVLink multicast.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
final=${OUT:-$root/gpu-all-out}
mkdir -p "$final"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
# The commit the scripts below record: GSHMEM_COMMIT, else the one `gpu-prebuilt.sh pack` wrote beside the carried
# build (the device's tree has no .git, and git there once answered another commit). Pass GSHMEM_COMMIT=<hash> in
# the command when the tree changed after the pack.
if [ -z "${GSHMEM_COMMIT:-}" ] && [ -s "$root/.gpu-prebuilt/commit.txt" ]; then
  GSHMEM_COMMIT=$(cat "$root/.gpu-prebuilt/commit.txt")
  export GSHMEM_COMMIT
fi
work=$(mktemp -d /tmp/gshmem-gpu-all.XXXXXX)
trap 'rm -rf "$work"' EXIT
steps=${STEPS:-check compat bench}
gbuild=$root/build
if [ -n "${PREBUILT:-}" ]; then
  "$root/scripts/gpu-prebuilt.sh" unpack || exit 1
  gbuild=$root/build-gpu
  # its binaries find build-gpu/lib by their run path; only what came along beside it goes on the path (the bench
  # and Python steps keep their own libgshmem)
  export LD_LIBRARY_PATH=$gbuild/prebuilt-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # the Python package built with CUDA beside it (pack does where it finds the device's python, 3.12): the python,
  # pybench, pipeline and moe steps copy it instead of building it (scripts/python-tests.sh)
  [ -d "$gbuild/py-site" ] && export GSHMEM_PY_PREBUILT=$gbuild/py-site
fi
# py_step NAME SCRIPT LIMIT_S RESERVE_S: the Python package built with CUDA into $work/NAME/site (install.txt), then
# scripts/SCRIPT with it on PYTHONPATH, OUT=$work/NAME/out, BUDGET_S=LIMIT_S - RESERVE_S, under timeout LIMIT_S.
py_step() {
  local name=$1 script=$2 limit=$3 reserve=$4
  GSHMEM_PY_CUDA=ON GSHMEM_PY_ARCH=$(echo "${ARCH:-sm_90}" | tr -dc 0-9) GSHMEM_PY_TARGET=$work/$name/site \
    GSHMEM_PY_INSTALL_ONLY=1 "$root/scripts/python-tests.sh" >"$work/$name/install.txt" 2>&1 &&
    PYTHONPATH=$work/$name/site PATH=$work/$name/site/bin:$PATH OUT=$work/$name/out BUDGET_S=$((limit - reserve)) \
    timeout "$limit" "$root/scripts/$script" >"$work/$name/console.txt" 2>&1
}
rc=0
for step in $steps; do
  mkdir -p "$work/$step"
  t0=$(date +%s)
  case $step in
    check) check_s=$((360 + 120 * (${PES:-2} > 2 ? ${PES:-2} - 2 : 0)))
           [ -n "${PREBUILT:-}" ] && check_s=$((check_s + 200))  # the whole suite, no build (~380 s at 2 PEs)
           OUT=$work/check timeout "${CHECK_TIMEOUT:-$check_s}" "$root/scripts/gpu-check.sh" \
             >"$work/check/console.txt" 2>&1 ;;
    compat) COMPAT_GSHMEM_BUILD=$root/build COMPAT_GSHMEM_PREBUILT=${PREBUILT:+$gbuild} OUT=$work/compat \
              timeout "${COMPAT_TIMEOUT:-560}" "$root/scripts/nvshmem-compat.sh" >"$work/compat/console.txt" 2>&1 ;;
    bench) QUICK=${QUICK:-1} PES=${PES:-2} PES_LIST=${PES_LIST:-} BUDGET_S=$((${BENCH_TIMEOUT:-400} - 20)) \
             OUT=$work/bench timeout "${BENCH_TIMEOUT:-400}" "$root/scripts/bench-gpu.sh" >"$work/bench/console.txt" 2>&1 ;;
    python) GSHMEM_PY_CUDA=ON GSHMEM_PY_ARCH=$(echo "${ARCH:-sm_90}" | tr -dc 0-9) GSHMEM_PY_TARGET=$work/python/site GSHMEM_TEST_GPU_PES=${PES:-2} \
              timeout "${PYTHON_TIMEOUT:-500}" "$root/scripts/python-tests.sh" -v -rs ${PYTEST_K:+-k "$PYTEST_K"} \
              >"$work/python/console.txt" 2>&1 ;;
    pybench) py_step pybench python-bench-gpu.sh "${PYBENCH_TIMEOUT:-560}" 90 ;;
    hostops)
      nvcc -O3 -arch="${ARCH:-sm_90}" -std=c++17 -o "$work/hostops/host_ops_probe" \
        "$root/bench/experiments/host_ops_probe.cu" -lcuda >"$work/hostops/build.txt" 2>&1 &&
        timeout 150 "$work/hostops/host_ops_probe" >"$work/hostops/probe.txt" 2>&1 ;;
    collsweep) OUT=$work/collsweep timeout "${SWEEP_TIMEOUT:-560}" "$root/scripts/coll-sweep-gpu.sh" \
                 >"$work/collsweep/console.txt" 2>&1 ;;
    collbisect) OUT=$work/collbisect BUDGET_S=$((${BISECT_TIMEOUT:-560} - 20)) timeout "${BISECT_TIMEOUT:-560}" \
                  "$root/scripts/coll-bisect-gpu.sh" >"$work/collbisect/console.txt" 2>&1 ;;
    moe) MOE_BUILD=${PREBUILT:+$gbuild} OUT=$work/moe BUDGET_S=$((${MOE_TIMEOUT:-580} - 20)) timeout "${MOE_TIMEOUT:-580}" "$root/scripts/moe-gpu.sh" \
           >"$work/moe/console.txt" 2>&1 ;;
    pipeline) py_step pipeline pipeline-gpu.sh "${PIPELINE_TIMEOUT:-560}" 120 ;;
    collquick)
      q=0
      for v in "" ${COLL_AB:-} ""; do
        echo "=== gshmem-bench --suite coll at ${PES:-2} PEs: ${v:-as is}"
        # shellcheck disable=SC2086  # NAME=VALUE[,NAME=VALUE] items become separate env arguments
        env ${v//,/ } timeout "${QUICK_TIMEOUT:-120}" "$gbuild/bin/gshmemrun" -n "${PES:-2}" -- \
          "$gbuild/bin/gshmem-bench" --suite coll --coll-forms "${COLL_FORMS:-stream}" \
          ${COLL_KINDS:+--coll-kinds "$COLL_KINDS"} ${COLL_SIZES:+--sizes "$COLL_SIZES"} || { echo "=== status $?"; q=1; }
      done >"$work/collquick/console.txt" 2>&1
      [ $q -eq 0 ] ;;
    bidir)
      nvcc -O3 -arch="${ARCH:-sm_90}" -std=c++17 -o "$work/bidir/bidir_probe" "$root/bench/experiments/bidir_probe.cu" -lcuda \
        >"$work/bidir/build.txt" 2>&1 && timeout 200 "$work/bidir/bidir_probe" ${BIDIR_MIB:-} >"$work/bidir/probe.txt" 2>&1 ;;
    bcastprobe)
      nvcc -O3 -arch="${ARCH:-sm_90}" -std=c++17 -o "$work/bcastprobe/bcast_probe" \
        "$root/bench/experiments/bcast_probe.cu" -lcuda >"$work/bcastprobe/build.txt" 2>&1 &&
        timeout 300 "$work/bcastprobe/bcast_probe" ${BCAST_MIB:-} >"$work/bcastprobe/probe.txt" 2>&1 ;;
    abi) BUILD=$gbuild OUT=$work/abi timeout "${ABI_TIMEOUT:-$((120 + 320 * ${ABI_ROUNDS:-1}))}" "$root/scripts/nvshmem-abi-gpu.sh" \
           >"$work/abi/console.txt" 2>&1 ;;
    flagprobe)
      nvcc -O3 -arch="${ARCH:-sm_90}" -std=c++17 -o "$work/flagprobe/flag_probe" "$root/bench/experiments/flag_probe.cu" \
        >"$work/flagprobe/build.txt" 2>&1 &&
        { cuobjdump -sass "$work/flagprobe/flag_probe" 2>&1 | grep -E 'Function|LD|ST|RED|MEMBAR|FENCE|CCTL|ERRBAR' \
            >"$work/flagprobe/sass.txt" || true; } &&
        timeout 120 "$work/flagprobe/flag_probe" >"$work/flagprobe/probe.txt" 2>&1 ;;
    peervm)
      nvcc -O2 -std=c++17 -o "$work/peervm/peer_vm_probe" "$root/bench/experiments/peer_vm_probe.cu" -lcuda \
        >"$work/peervm/build.txt" 2>&1 && timeout 60 "$work/peervm/peer_vm_probe" >"$work/peervm/probe.txt" 2>&1 ;;
    *) echo "gpu-all.sh: unknown step $step"; false ;;
  esac
  s=$?
  echo "=== $step: status $s in $(( $(date +%s) - t0 )) s"
  [ $s -eq 0 ] || rc=1
done
# The archive without the Python package the steps installed (*/site: tens of MB) and, where it would still pass
# the device tool's 16 MiB a file, without the files over 1 MiB (named in left-out.txt inside it): an archive over
# the limit does not come back at all (session 36, pybench + pipeline).
tar czf "$final/all.tgz" -C "$work" --exclude='./*/site' .
if [ "$(stat -c %s "$final/all.tgz")" -gt $((15 * 1024 * 1024)) ]; then
  (cd "$work" && find . -path './*/site' -prune -o -type f -size +1M -print) >"$work/left-out.txt"
  tar czf "$final/all.tgz" -C "$work" --exclude='./*/site' -X "$work/left-out.txt" .
  echo "gpu-all.sh: all.tgz was over 15 MiB: left out the files over 1 MiB ($(wc -l <"$work/left-out.txt"), named" \
       "in its left-out.txt)"
fi
for step in $steps; do
  case $step in
    check) grep -E 'tests passed|Failed|\*\*\*|Timeout' "$work/check/ctest_gpu.txt" 2>/dev/null | head -20
           tail -5 "$work/check/console.txt" ;;
    compat) cat "$work/compat/table.txt" 2>/dev/null ;;
    bench) grep -vE '^(put|get)_bw(_all)?/(thread|warp)' "$work/bench/table.txt" 2>/dev/null | head -200
           cat "$work/bench/targets.md" 2>/dev/null ;;
    python) grep -E 'PASS|FAIL|SKIP|ERROR|passed|failed' "$work/python/console.txt" | tail -30 ;;
    pybench) tail -3 "$work/pybench/install.txt"; cat "$work/pybench/out/table.md" 2>/dev/null ;;
    pipeline) tail -3 "$work/pipeline/install.txt"; cat "$work/pipeline/out/table.md" 2>/dev/null ||
                tail -20 "$work/pipeline/console.txt" ;;
    hostops) grep -E '^(host_ops_probe|target|  (put|get) )' "$work/hostops/probe.txt" 2>/dev/null ;;
    bidir) cat "$work/bidir/build.txt" "$work/bidir/probe.txt" 2>/dev/null ;;
    flagprobe) cat "$work/flagprobe/build.txt" "$work/flagprobe/probe.txt" 2>/dev/null ;;
    bcastprobe) cat "$work/bcastprobe/build.txt" "$work/bcastprobe/probe.txt" 2>/dev/null ;;
    abi) cat "$work/abi/abi.md" 2>/dev/null || tail -20 "$work/abi/console.txt" ;;
    peervm) cat "$work/peervm/build.txt" "$work/peervm/probe.txt" 2>/dev/null ;;
    collquick) grep -vE '/busbw' "$work/collquick/console.txt" | head -150 ;;
    collbisect) cat "$work/collbisect/bisect.md" 2>/dev/null || tail -30 "$work/collbisect/console.txt" ;;
    moe) grep -E 'tests passed|Failed|\*\*\*|Timeout|passed|failed|status' "$work/moe/console.txt" | tail -30
         cat "$work/moe"/bench_api_*.jsonl "$work/moe/bench_torch.jsonl" 2>/dev/null | grep '^{' ;;
    collsweep) grep -E 'wrong result|failed|skipped' "$work/collsweep/log.txt" 2>/dev/null
               cat "$work/collsweep/sweep.md" 2>/dev/null ;;
  esac
done
exit $rc
