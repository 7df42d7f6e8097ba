#!/usr/bin/env bash
# The host rows on 2 CPU PEs: gshmem (gshmemrun) and, where Open MPI's OSHMEM is installed, the same source
# against OSHMEM (oshrun), merged side by side; then the collective rows (suite coll: host_reduce, ...), OSHMEM's
# through adapters onto its OpenSHMEM 1.4 active-set routines (bench/oshmem_coll.hpp; no reducescatter there), at
# 2 PEs and, with --name-pes (rows .../pes=4), at 4 PEs (oversubscribed on a 2-core machine). Used for
# bench/results/*-cpu-*.json.
#   bench/run-cpu.sh [GSHMEM_BUILD_DIR] [OUT_DIR]      (defaults: build, bench-out-cpu)
# Extra gshmem-bench options can be passed in BENCH_ARGS (main runs) and COLL_ARGS (collective runs). ROUNDS=<n>
# (default 3): each library's runs n times, alternating gshmem and OSHMEM; a row is the median over the rounds
# (this 2-core machine moves small rows by 2x between single runs, bench/NOTES.md).
# Collective runs: sizes 8 B..16 KiB with at most 200 calls a sample, 10 samples; 64 KiB..16 MiB with
# COLL_LARGE_ITERS (default 10) calls a sample, 5 samples (OSHMEM's 16 MiB calls take ~30 ms; the default ~200 calls
# would make one run 100 s). COLL_PES (default "2 4"): PE counts of the collective runs. OSH_SCOLL_BASIC_PES
# (default "2"; "" for none): also OSHMEM with --mca scoll basic at these PE counts (column oshmem-basic): its
# default collective component (scoll mpi) is slower at large sizes on this machine, and basic at 4 PEs on 2 cores
# takes ~30 ms a call (bench/NOTES.md). OSHMEM collective runs that fail or pass COLL_TIMEOUT (default 300 s) are
# left out with a message; the main runs must succeed.
# shellcheck disable=SC2054,SC2206  # commas are inside option values; BENCH_ARGS, COLL_ARGS are split on purpose
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
out=${2:-bench-out-cpu}
mkdir -p "$out"
out=$(cd "$out" && pwd)
init_runs=${INIT_RUNS:-5}
args=(--suite all --sizes 8:16M:4 --malloc-sizes 4K,1M,64M --repeats 10 --warmup 2 --lat-iters 20000 ${BENCH_ARGS:-})
coll_small=(--suite coll --sizes 8,16,64,256,1K,4K,16K --repeats 10 --warmup 2 ${COLL_ARGS:-})
coll_large=(--suite coll --sizes 64K,256K,1M,4M,16M --repeats 5 --warmup 1 --iters "${COLL_LARGE_ITERS:-10}"
            ${COLL_ARGS:-})
coll_pes=(${COLL_PES:-2 4})
coll_timeout=${COLL_TIMEOUT:-300}
basic_pes=" ${OSH_SCOLL_BASIC_PES-2} "

rounds=${ROUNDS:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "run-cpu.sh: ROUNDS must be a positive integer, not '$rounds'"; exit 2; }

export GSHMEM_DEVICE=cpu
have_osh=0
if command -v oshcc >/dev/null && command -v oshrun >/dev/null; then
  have_osh=1
  cmake -S "$here" -B "$out/oshmem-build" -DBENCH_BACKEND=oshmem >/dev/null
  cmake --build "$out/oshmem-build" -j2 >/dev/null
else
  echo "run-cpu.sh: no oshcc/oshrun: gshmem column only"
fi
osh=(oshrun --allow-run-as-root --oversubscribe --mca spml ucx -x UCX_TLS=self,sm,tcp)
# Open MPI 4.1's OSHMEM segfaults in its exit path on this image (a plain shmem_init/shmem_finalize program
# does too, see bench/NOTES.md); the figures are written before that, so a run counts if its JSON exists.
# run_osh NAME JSON NP [OSHRUN OPTIONS --] BENCH ARGS...; soft=1: a failed run is reported and skipped (returns 1).
soft=0
run_osh() {
  local name=$1 json=$2 np=$3 extra=()
  shift 3
  if [[ ${1:-} == --mca ]]; then extra=("$1" "$2" "$3"); shift 3; fi
  rm -f "$json"
  local t=()
  [[ $soft == 1 ]] && t=(timeout "$coll_timeout")
  "${t[@]}" "${osh[@]}" -np "$np" "${extra[@]}" "$out/oshmem-build/oshmem-bench" "$@" --json "$json" \
    2>"$out/$name.stderr" || true
  if [[ ! -s $json ]]; then
    echo "OSHMEM run $name wrote no JSON:"; tail -n 20 "$out/$name.stderr"
    [[ $soft == 1 ]] && return 1
    exit 1
  fi
}
# oshrun binds each PE to a core of its own where there are enough cores (2 PEs here: rank r on core r) and leaves
# them unbound when oversubscribed; gshmemrun binds nothing, and an unbound pair of PEs sometimes shares one core
# for a whole run (every collective then ~35 us: bench/NOTES.md). BIND=1 (default) gives gshmem's PEs oshrun's
# policy: PE r on core r (taskset) where the PEs fit the cores.
ncores=$(nproc)
run_g() {  # run_g NP JSON BENCH ARGS...
  local np=$1 json=$2 pin=()
  shift 2
  if [[ ${BIND:-1} == 1 && $np -le $ncores ]] && command -v taskset >/dev/null; then
    # shellcheck disable=SC2016  # expanded by the PE's shell, where gshmemrun has set GSHMEM_LOCAL_RANK
    pin=(sh -c 'exec taskset -c "$GSHMEM_LOCAL_RANK" "$@"' pin)
  fi
  "$build/bin/gshmemrun" -n "$np" -- "${pin[@]}" "$build/bin/gshmem-bench" "$@" --json "$json"
}

g_files=() o_files=() b_files=()
for ((k = 1; k <= rounds; k++)); do
  table=()
  [[ $k -gt 1 ]] && table=(--no-table)
  run_g 2 "$out/gshmem-round$k.json" "${args[@]}" "${table[@]}"
  g_files+=("$out/gshmem-round$k.json")
  if [[ $have_osh == 1 ]]; then
    run_osh "oshmem-round$k" "$out/oshmem-round$k.json" 2 "${args[@]}" "${table[@]}"
    o_files+=("$out/oshmem-round$k.json")
  fi
  for np in "${coll_pes[@]}"; do
    named=()
    [[ $np != 2 ]] && named=(--name-pes)
    for part in small large; do
      if [[ $part == small ]]; then cargs=("${coll_small[@]}"); else cargs=("${coll_large[@]}"); fi
      tag=coll-$part-n$np-round$k
      run_g "$np" "$out/gshmem-$tag.json" "${cargs[@]}" "${named[@]}" --no-table
      g_files+=("$out/gshmem-$tag.json")
      [[ $have_osh == 1 ]] || continue
      soft=1
      run_osh "oshmem-$tag" "$out/oshmem-$tag.json" "$np" "${cargs[@]}" "${named[@]}" --no-table &&
        o_files+=("$out/oshmem-$tag.json")
      if [[ $basic_pes == *" $np "* ]]; then
        run_osh "oshmem-basic-$tag" "$out/oshmem-basic-$tag.json" "$np" --mca scoll basic "${cargs[@]}" \
          "${named[@]}" --no-table && b_files+=("$out/oshmem-basic-$tag.json")
      fi
      soft=0
    done
  done
done
for i in $(seq "$init_runs"); do
  run_g 2 "$out/gshmem-init$i.json" --suite init --no-table
  g_files+=("$out/gshmem-init$i.json")
  if [[ $have_osh == 1 ]]; then
    run_osh "oshmem-init$i" "$out/oshmem-init$i.json" 2 --suite init --no-table
    o_files+=("$out/oshmem-init$i.json")
  fi
done
libs=(--lib gshmem "${g_files[@]}")
[[ $have_osh == 1 ]] && libs+=(--lib oshmem "${o_files[@]}")
[[ ${#b_files[@]} -gt 0 ]] && libs+=(--lib oshmem-basic "${b_files[@]}")
python3 "$here/merge.py" "${libs[@]}" -o "$out/merged.json" | tee "$out/table.txt"
python3 "$here/plot.py" "$out/merged.json" -o "$out/merged.png" || true
