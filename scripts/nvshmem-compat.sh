#!/usr/bin/env bash
# NVSHMEM compatibility check for the GPU machine: builds the API-compatibility programs of tests/compat (written
# against NVIDIA NVSHMEM's API only) against NVIDIA NVSHMEM 3.4.5 (pip package nvidia-nvshmem-cu13) and against
# gshmem, runs both on 2 GPUs, and prints a table program x library -> PASS/FAIL. Logs go to $OUT (or
# ./nvshmem-compat-out).
#   columns: nvshmem      NVIDIA NVSHMEM, nvcc -rdc=true, unique id shared over MPI_Bcast (COMPAT_INIT=uid)
#            gshmem       gshmem with NVSHMEM's exact nvcc line (-rdc=true), same launch
#            gshmem-nordc gshmem without -rdc, started with gshmemrun and plain nvshmem_init
#   extra rows: seed000 (ring_p with seed 000's environment: NVSHMEM_BOOTSTRAP=MPI, plain nvshmem_init, mpirun)
#               and mpi_comm (ring_p with NVSHMEMX_INIT_WITH_MPI_COMM).
# Also compares name lists (scripts/nvshmem_names.py, on NVSHMEM's headers after preprocessing, since most of its
# typed names are macro-generated): NVSHMEM names our headers define that NVSHMEM lacks, NVSHMEM's public functions
# we do not provide ($OUT/names_missing.txt) and, separately, the collectives among them
# ($OUT/names_missing_collectives.txt).
#
#   scripts/nvshmem-compat.sh                 the whole check (GPU machine with nvidia-nvshmem-cu13)
#   scripts/nvshmem-compat.sh --names-only    only the name comparison: needs nvcc and NVSHMEM's headers
#                                             (NVSHMEM_INCLUDE=<dir>, else the pip package), no GPU, no MPI
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
final=${OUT:-$root/nvshmem-compat-out}
mkdir -p "$final"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH
if [ "${1:-}" = "--names-only" ]; then
  inc=${NVSHMEM_INCLUDE:-}
  if [ -z "$inc" ]; then
    inc=$(python3 -c 'import nvidia.nvshmem, os; print(os.path.join(nvidia.nvshmem.__path__[0], "include"))' \
          2>/dev/null) || inc=
  fi
  if [ -z "$inc" ] || [ ! -f "$inc/nvshmem.h" ]; then
    echo "no NVSHMEM headers: set NVSHMEM_INCLUDE to NVSHMEM's include directory (or install nvidia-nvshmem-cu13)"
    exit 1
  fi
  exec python3 "$root/scripts/nvshmem_names.py" --nvshmem-include "$inc" --out "$final"
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--names-only]"; exit 1
fi
arch=${ARCH:-sm_90}
jobs=$(nproc)
work=${WORK:-/tmp/nvshmem-compat}
rm -rf "$work" && mkdir -p "$work"/{nv,gs,gsn,lib,logs}
out=$work/logs  # every log; $final gets the table, the name lists and logs.tar.gz (the device tool brings 8 files)
finish() {
  cp "$out"/table.txt "$out"/setup.txt "$out"/names_missing.txt "$out"/names_missing_collectives.txt \
    "$out"/names.txt "$out"/names_not_in_nvshmem.txt "$out"/signatures.txt "$final"/ 2>/dev/null
  tar czf "$final/logs.tar.gz" -C "$work" logs
}
trap finish EXIT
programs=(ring_p put_signal_ring block_put atomics wait_until teams rma_ext user_buffer collectives device_patterns
          host_ring host_atomics host_ext host_collectives host_teams host_patterns host_probe_init host_headers)

# ---- NVIDIA NVSHMEM from the pip package ----
pkg=$(python3 -c 'import nvidia.nvshmem, os; print(nvidia.nvshmem.__path__[0])' 2>/dev/null) || pkg=
if [ -z "$pkg" ] || [ ! -d "$pkg/include" ]; then
  echo "nvidia-nvshmem-cu13 is not installed here (python3 -c 'import nvidia.nvshmem' failed)"; exit 1
fi
ln -sf "$pkg"/lib/libnvshmem_host.so.3 "$work/lib/libnvshmem_host.so"
ln -sf "$pkg"/lib/libnvshmem_device.a "$work/lib/libnvshmem_device.a"
echo "NVSHMEM package: $pkg" | tee "$out/setup.txt"
grep -hE '#define NVSHMEM_(VENDOR_)?(MAJOR|MINOR|PATCH)_VERSION|#define NVSHMEM_VENDOR_STRING' -r "$pkg/include" \
  | sort -u | tee -a "$out/setup.txt"
mpi_cflags=$(mpicc --showme:compile 2>/dev/null)
mpi_libs=$(mpicc --showme:link 2>/dev/null)

# ---- gshmem: the library and gshmemrun ----
# COMPAT_GSHMEM_BUILD=<dir>: a configured build tree of this checkout to reuse (scripts/gpu-all.sh passes the check
# step's build/ when it is there: on a machine kept warm between calls that saves the library's build).
# COMPAT_GSHMEM_PREBUILT=<dir>: a build carried from the build machine (scripts/gpu-prebuilt.sh), used as it is.
gsb=$work/build
if [ -n "${COMPAT_GSHMEM_PREBUILT:-}" ]; then
  gsb=$COMPAT_GSHMEM_PREBUILT
  echo "=== gshmem prebuilt in $gsb ($(tr '\n' ' ' <"$gsb/prebuilt.txt"))"
elif [ -n "${COMPAT_GSHMEM_BUILD:-}" ] && [ -f "$COMPAT_GSHMEM_BUILD/CMakeCache.txt" ]; then
  gsb=$COMPAT_GSHMEM_BUILD
  echo "=== building gshmem in $gsb ($(git -C "$root" rev-parse --short HEAD 2>/dev/null))"
else
  echo "=== building gshmem ($(git -C "$root" rev-parse --short HEAD 2>/dev/null))"
  cmake -S "$root" -B "$gsb" -DCMAKE_BUILD_TYPE=Release -DGSHMEM_CUDA_ARCHITECTURES=90 -DGSHMEM_BUILD_TESTS=OFF \
    -DGSHMEM_BUILD_EXAMPLES=OFF >"$out/gshmem_configure.log" 2>&1 || { tail -30 "$out/gshmem_configure.log"; exit 1; }
fi
[ -n "${COMPAT_GSHMEM_PREBUILT:-}" ] || cmake --build "$gsb" -j"$jobs" --target gshmem gshmemrun \
  >"$out/gshmem_build.log" 2>&1 || { grep -E 'error' -A3 "$out/gshmem_build.log" | head -60; exit 1; }
gsinc="-I$root/include/gshmem/nvshmem -I$root/include -I$gsb/include"
gslib="-L$gsb/lib -lgshmem -lcuda -Xlinker -rpath=$gsb/lib"  # -lcuda: programs' own driver calls

# ---- compile every program three ways, in parallel ----
src=$root/tests/compat
build_one() {  # $1 lib (nv|gs|gsn) $2 program
  local lib=$1 p=$2 f rdc="-rdc=true" inc libs
  f=$src/$p.cu; [ -f "$f" ] || f=$src/$p.cpp
  case $lib in
    nv) inc="-I$pkg/include"; libs="-L$work/lib -lnvshmem_host -lnvshmem_device -lcuda -Xlinker -rpath=$pkg/lib" ;;
    gs) inc=$gsinc; libs=$gslib ;;
    gsn) inc=$gsinc; libs=$gslib; rdc="-rdc=false" ;;
  esac
  local xflags=""
  [ "${f##*.}" = "cpp" ] && xflags="-x cu"
  # shellcheck disable=SC2086
  nvcc $rdc -arch=$arch -std=c++17 -O2 $xflags $inc -I$src $mpi_cflags -DCOMPAT_WITH_MPI=1 -DOMPI_SKIP_MPICXX=1 \
    "$f" "$src/compat_mpi.cpp" -o "$work/$lib/$p" $libs $mpi_libs >"$out/build_${lib}_$p.log" 2>&1
}
export -f build_one
export src work pkg gsinc gslib arch mpi_cflags mpi_libs out
echo "=== compiling ${#programs[@]} programs x 3 builds"
t0=$(date +%s)
for lib in nv gs gsn; do for p in "${programs[@]}"; do echo "$lib $p"; done; done \
  | xargs -P "$jobs" -n 2 bash -c 'build_one "$0" "$1" || echo "build FAIL $0 $1"'
echo "compiled in $(( $(date +%s) - t0 )) s"

# ---- run ----
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2)
declare -A result
run_one() {  # $1 row  $2 column  $3 log name  $4.. command (env via `env`)
  local row=$1 col=$2 log=$out/run_${3}.log; shift 3
  local bin=${*: -1}
  if [ ! -x "$bin" ]; then result[$row,$col]="NOBUILD"; return; fi
  timeout 60 "$@" >"$log" 2>&1
  local rc=$? n
  n=$(grep -c ': PASS (' "$log")
  if [ $rc -eq 0 ] && [ "$n" -ge 2 ]; then result[$row,$col]=PASS
  elif [ $rc -eq 124 ]; then result[$row,$col]="FAIL(timeout)"
  else result[$row,$col]="FAIL(rc=$rc)"; fi
}
uid_env=(env COMPAT_INIT=uid NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_REMOTE_TRANSPORT=none)
seed_env=(env COMPAT_INIT=plain NVSHMEM_BOOTSTRAP=MPI NVSHMEM_DISABLE_IBRC=1 NVSHMEM_DISABLE_IBGDA=1
          NVSHMEM_DISABLE_IBDEVX=1 NVSHMEM_REMOTE_TRANSPORT=none NVSHMEM_SYMMETRIC_SIZE=256M NVSHMEM_DEBUG=WARN
          NVSHMEM_DISABLE_NVLS=1)
for p in "${programs[@]}"; do
  echo "=== $p"
  envs=("${uid_env[@]}")
  # host_probe_init starts with a plain nvshmem_init, as PyTorch's extension does: NVSHMEM's MPI bootstrap then
  [ "$p" = host_probe_init ] && envs=("${seed_env[@]}")
  run_one "$p" nvshmem "nv_$p" "${envs[@]}" "${MPIRUN[@]}" "$work/nv/$p"
  run_one "$p" gshmem "gs_$p" "${envs[@]}" "${MPIRUN[@]}" "$work/gs/$p"
  run_one "$p" gshmem-nordc "gsn_$p" env COMPAT_INIT=plain GSHMEM_WAIT_TIMEOUT=40 \
    "$gsb/bin/gshmemrun" -n 2 -- "$work/gsn/$p"
done
echo "=== ring_p: seed 000's environment, an MPI communicator, structs never initialised, GPU chosen after init"
extra_rows=("ring_p[seed000]" "ring_p[mpi_comm]" "ring_p[mpi_comm_uninit]" "ring_p[uid_uninit]"
            "ring_p[set_device_after]" "ring_p[set_device_again]" "host_ring[mpi_comm_uninit]"
            "ring_p[mpi_comm_args]")
for lib in nv gs; do
  col=nvshmem; [ $lib = gs ] && col=gshmem
  run_one "ring_p[seed000]" $col "${lib}_seed000" "${seed_env[@]}" "${MPIRUN[@]}" "$work/$lib/ring_p"
  run_one "ring_p[mpi_comm]" $col "${lib}_mpi_comm" env COMPAT_INIT=mpi_comm NVSHMEM_REMOTE_TRANSPORT=none \
    "${MPIRUN[@]}" "$work/$lib/ring_p"
  run_one "ring_p[mpi_comm_uninit]" $col "${lib}_mpi_comm_uninit" env COMPAT_INIT=mpi_comm_uninit \
    NVSHMEM_REMOTE_TRANSPORT=none "${MPIRUN[@]}" "$work/$lib/ring_p"
  run_one "ring_p[uid_uninit]" $col "${lib}_uid_uninit" env COMPAT_INIT=uid_uninit \
    NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME=lo NVSHMEM_REMOTE_TRANSPORT=none "${MPIRUN[@]}" "$work/$lib/ring_p"
  for order in after again; do
    run_one "ring_p[set_device_$order]" $col "${lib}_set_device_$order" env COMPAT_INIT=mpi_comm_uninit \
      COMPAT_SET_DEVICE=$order NVSHMEM_REMOTE_TRANSPORT=none "${MPIRUN[@]}" "$work/$lib/ring_p"
  done
  run_one "host_ring[mpi_comm_uninit]" $col "${lib}_host_ring_mpi_comm_uninit" env COMPAT_INIT=mpi_comm_uninit \
    NVSHMEM_REMOTE_TRANSPORT=none "${MPIRUN[@]}" "$work/$lib/host_ring"
  run_one "ring_p[mpi_comm_args]" $col "${lib}_mpi_comm_args" env COMPAT_INIT=mpi_comm_args \
    NVSHMEM_REMOTE_TRANSPORT=none "${MPIRUN[@]}" "$work/$lib/ring_p"
done
# a host-only C++ file that includes only <nvshmem.h> and uses driver, runtime and half types: g++ must compile it
for lib in nv gs; do
  col=nvshmem; inc="-I$pkg/include"
  [ $lib = gs ] && { col=gshmem; inc="-I$root/include/gshmem/nvshmem -I$root/include -I$gsb/include"; }
  # shellcheck disable=SC2086
  if g++ -std=c++17 -fsyntax-only -I/usr/local/cuda/include -I/usr/local/cuda/include/cccl $inc "$src/driver_types.cpp" \
       >"$out/build_${lib}_driver_types.log" 2>&1; then result["driver_types[g++]",$col]=PASS
  else result["driver_types[g++]",$col]="FAIL(build)"; fi
done
extra_rows+=("driver_types[g++]")
if grep -q WARN "$out/run_gs_seed000.log" 2>/dev/null; then result["ring_p[seed000]",gshmem]="FAIL(WARN)"; fi

# ---- table ----
{
  printf "%-20s %-14s %-14s %-14s\n" program nvshmem gshmem gshmem-nordc
  for row in "${programs[@]}" "${extra_rows[@]}"; do
    printf "%-20s %-14s %-14s %-14s\n" "$row" "${result[$row,nvshmem]:--}" "${result[$row,gshmem]:--}" \
      "${result[$row,gshmem-nordc]:--}"
  done
} | tee "$out/table.txt"

# ---- names: ours vs NVSHMEM's (NVSHMEM's headers preprocessed host and device side) ----
python3 "$root/scripts/nvshmem_names.py" --nvshmem-include "$pkg/include" --arch "$arch" --out "$out" \
  >"$out/names.txt" 2>&1
head -40 "$out/names.txt"
for f in nvshmem_team_get_config nvshmem_barrier nvshmem_team_sync nvshmem_info_get_version nvshmem_init \
         nvshmem_int_wait_until_any nvshmem_signal_fetch nvshmem_int_atomic_fetch_add; do
  grep -rhE "\b$f\s*\(" "$pkg/include" | head -2
done >"$out/signatures.txt"
cat "$out/signatures.txt" | cut -c1-200
for f in "$out"/build_*.log; do [ -s "$f" ] && grep -l -E 'error' "$f"; done | head
! grep -q FAIL "$out/table.txt"
