#!/usr/bin/env bash
# The host rows on 2 CPU PEs: gshmem (gshmemrun) and, where Open MPI's OSHMEM is installed, the same source
# against OSHMEM (oshrun), merged side by side. The collective rows (suite coll: host_reduce, ...) are gshmem's
# only: Open MPI 4.1's OSHMEM has only OpenSHMEM 1.4's active-set collectives, not the team forms the rows call. Used for bench/results/*-cpu-*.json.
#   bench/run-cpu.sh [GSHMEM_BUILD_DIR] [OUT_DIR]      (defaults: build, bench-out-cpu)
# Extra gshmem-bench options can be passed in BENCH_ARGS. ROUNDS=<n> (default 3): each library's main run n times,
# alternating gshmem and OSHMEM; a row is the median over the rounds (this 2-core machine moves small rows by 2x
# between single runs, bench/NOTES.md).
# shellcheck disable=SC2054,SC2206  # commas are inside option values; BENCH_ARGS is split on purpose
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
out=${2:-bench-out-cpu}
mkdir -p "$out"
out=$(cd "$out" && pwd)
init_runs=${INIT_RUNS:-5}
args=(--suite all,coll --sizes 8:16M:4 --malloc-sizes 4K,1M,64M --repeats 10 --warmup 2 --lat-iters 20000 ${BENCH_ARGS:-})

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
osh=(oshrun --allow-run-as-root -np 2 --mca spml ucx -x UCX_TLS=self,sm,tcp)
# Open MPI 4.1's OSHMEM segfaults in its exit path on this image (a plain shmem_init/shmem_finalize program
# does too, see bench/NOTES.md); the figures are written before that, so a run counts if its JSON exists.
run_osh() { rm -f "$2"; "${osh[@]}" "$out/oshmem-build/oshmem-bench" "${@:3}" --json "$2" 2>"$out/$1.stderr" || true
            [[ -s "$2" ]] || { echo "OSHMEM run $1 wrote no JSON:"; cat "$out/$1.stderr"; exit 1; }; }

g_files=() o_files=()
for ((k = 1; k <= rounds; k++)); do
  table=()
  [[ $k -gt 1 ]] && table=(--no-table)
  "$build/bin/gshmemrun" -n 2 -- "$build/bin/gshmem-bench" "${args[@]}" "${table[@]}" --json "$out/gshmem-round$k.json"
  g_files+=("$out/gshmem-round$k.json")
  if [[ $have_osh == 1 ]]; then
    run_osh "oshmem-round$k" "$out/oshmem-round$k.json" "${args[@]}" "${table[@]}"
    o_files+=("$out/oshmem-round$k.json")
  fi
done
for i in $(seq "$init_runs"); do
  "$build/bin/gshmemrun" -n 2 -- "$build/bin/gshmem-bench" --suite init --no-table --json "$out/gshmem-init$i.json"
  g_files+=("$out/gshmem-init$i.json")
  if [[ $have_osh == 1 ]]; then
    run_osh "oshmem-init$i" "$out/oshmem-init$i.json" --suite init --no-table
    o_files+=("$out/oshmem-init$i.json")
  fi
done
libs=(--lib gshmem "${g_files[@]}")
[[ $have_osh == 1 ]] && libs+=(--lib oshmem "${o_files[@]}")
python3 "$here/merge.py" "${libs[@]}" -o "$out/merged.json" | tee "$out/table.txt"
python3 "$here/plot.py" "$out/merged.json" -o "$out/merged.png" || true
