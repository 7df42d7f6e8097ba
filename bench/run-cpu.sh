#!/usr/bin/env bash
# The host rows on 2 CPU PEs: gshmem (gshmemrun) and, where Open MPI's OSHMEM is installed, the same source
# against OSHMEM (oshrun), merged side by side. Used for bench/results/*-cpu-*.json.
#   bench/run-cpu.sh [GSHMEM_BUILD_DIR] [OUT_DIR]      (defaults: build, bench-out-cpu)
# Extra gshmem-bench options can be passed in BENCH_ARGS.
# shellcheck disable=SC2054,SC2206  # commas are inside option values; BENCH_ARGS is split on purpose
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
out=${2:-bench-out-cpu}
mkdir -p "$out"
out=$(cd "$out" && pwd)
init_runs=${INIT_RUNS:-5}
args=(--suite all --sizes 8:16M:4 --malloc-sizes 4K,1M,64M --repeats 10 --warmup 2 --lat-iters 20000 ${BENCH_ARGS:-})

export GSHMEM_DEVICE=cpu
"$build/bin/gshmemrun" -n 2 -- "$build/bin/gshmem-bench" "${args[@]}" --json "$out/gshmem.json"
g_init=()
for i in $(seq "$init_runs"); do
  "$build/bin/gshmemrun" -n 2 -- "$build/bin/gshmem-bench" --suite init --no-table --json "$out/gshmem-init$i.json"
  g_init+=("$out/gshmem-init$i.json")
done

libs=(--lib gshmem "$out/gshmem.json" "${g_init[@]}")
if command -v oshcc >/dev/null && command -v oshrun >/dev/null; then
  cmake -S "$here" -B "$out/oshmem-build" -DBENCH_BACKEND=oshmem >/dev/null
  cmake --build "$out/oshmem-build" -j2 >/dev/null
  osh=(oshrun --allow-run-as-root -np 2 --mca spml ucx -x UCX_TLS=self,sm,tcp)
  # Open MPI 4.1's OSHMEM segfaults in its exit path on this image (a plain shmem_init/shmem_finalize program
  # does too, see bench/NOTES.md); the figures are written before that, so a run counts if its JSON exists.
  run_osh() { rm -f "$2"; "${osh[@]}" "$out/oshmem-build/oshmem-bench" "${@:3}" --json "$2" 2>"$out/$1.stderr" || true
              [[ -s "$2" ]] || { echo "OSHMEM run $1 wrote no JSON:"; cat "$out/$1.stderr"; exit 1; }; }
  run_osh oshmem "$out/oshmem.json" "${args[@]}"
  o_init=()
  for i in $(seq "$init_runs"); do
    run_osh "oshmem-init$i" "$out/oshmem-init$i.json" --suite init --no-table
    o_init+=("$out/oshmem-init$i.json")
  done
  libs+=(--lib oshmem "$out/oshmem.json" "${o_init[@]}")
else
  echo "run-cpu.sh: no oshcc/oshrun: gshmem column only"
fi
python3 "$here/merge.py" "${libs[@]}" -o "$out/merged.json" | tee "$out/table.txt"
python3 "$here/plot.py" "$out/merged.json" -o "$out/merged.png" || true
