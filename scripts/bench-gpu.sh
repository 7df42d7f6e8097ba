#!/usr/bin/env bash
# gshmem vs NVIDIA NVSHMEM 3.4.5 on a GPU machine (nvidia-h200-x2, -x4, -x8), one command:
#   scripts/bench-gpu.sh [build|run|all]        (default all; results to $OUT, or ./bench-out-gpu)
# Builds gshmem-bench against gshmem (in-tree, plain nvcc, no -rdc) and the same bench/ source against NVIDIA
# NVSHMEM (standalone bench/CMakeLists.txt, -rdc, the pip package nvidia-nvshmem-cu13 found with python3), runs
# both on $PES GPUs with the same options and the same unique-id bootstrap (rank r on GPU r % GPU count), measures
# init in extra processes (cold and with the CUDA context made first), optionally runs the barrier and ping-pong
# suites again at each PE count of $PES_LIST, merges the JSON side by side (bench/merge.py) and plots it
# (bench/plot.py, if matplotlib is there). Files in $OUT (at most 8): <date>-<device>-x<GPUs>.json (merged, for
# bench/results/; -<PES>pe appended where PEs share GPUs), <date>-<device>-x<GPUs>.png, table.txt, targets.md
# (issue 4's goals and the rows behind, bench/targets.py), gshmem.json, nvshmem.json (the main runs), raw.tgz
# (every other per-process JSON: init, PE-count sweep, extra rounds), log.txt.
#   PES=<n>              ranks of the main runs (default 2)
#   PES_LIST="2 4 8"     also run $PES_SUITES (default barrier,host-barrier,pingpong) at each count; rows get a
#                        /pes=<n> suffix (gshmem-bench --name-pes), so they merge beside the main rows
#   PATTERN=pair,all     device put/get bandwidth patterns (default pair,all with more than 2 PEs, else pair)
#   ROUNDS=<n>           run each library's main run n times, alternating (gshmem, NVSHMEM, gshmem, ...); each row
#                        is the median over the rounds (merge.py), so drift of the driver or the machine during the
#                        run falls on both libraries alike (default 1; the extra rounds' JSON go into raw.tgz)
#   QUICK=1              a shorter sweep; BENCH_ARGS: extra options for the main runs (an option given again
#                        overrides the script's); SWEEP_ARGS: the same for the PES_LIST runs
#   BUDGET_S=540         seconds from the start (build included) after which no further run starts and each
#                        run's timeout is cut to what is left, so the merge and plot still happen within one
#                        device call (10 minutes); what was skipped is named in the log
#   SUITES=all,coll      what to run (comma list; default all,coll): "all" (or any gshmem-bench suites) for the
#                        main runs, "coll" for the collective runs: gshmem-bench --suite coll with both libraries
#                        and, where NCCL is found (pip's nvidia-nccl-cu13, or next to the CUDA toolkit), nccl-bench,
#                        merged as a third column (NCCL); SUITES=coll runs only those (no main, no init runs).
#                        The coll runs come first (they take about a minute), alternate by round as the main runs
#                        do, take BENCH_ARGS then COLL_ARGS, and their JSON go into raw.tgz
#   COLL_AB="NAME=VALUE[,NAME=VALUE] ..." gshmem's coll run once more per item with those settings, then once more
#                        as is (A2: how far two runs of the same build differ), each printed beside the first (log.txt)
#   GSHMEM_COMMIT=<hash> (the device machine gets the tree without .git)
# Never uses NVLink multicast.
# shellcheck disable=SC2054,SC2206  # commas are inside option values; BENCH_ARGS is split on purpose
set -euo pipefail
phase=${1:-all}
budget=${BUDGET_S:-540}
deadline=$((SECONDS + budget))
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/bench-out-gpu}
mkdir -p "$out"
work=$(mktemp -d /tmp/gshmem-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
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

pes=${PES:-2}
pes_list=${PES_LIST:-}
pes_suites=${PES_SUITES:-barrier,host-barrier,pingpong}
if [[ $pes -gt 2 ]]; then pattern=${PATTERN:-pair,all}; else pattern=${PATTERN:-pair}; fi
rounds=${ROUNDS:-1}
suites=${SUITES:-all,coll}
main_suites=$(tr ',' '\n' <<<"$suites" | grep -vx coll | paste -sd, - || true)
want_coll=0
grep -qx coll < <(tr ',' '\n' <<<"$suites") && want_coll=1
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench-gpu.sh: ROUNDS must be a positive integer, not '$rounds'"; exit 2; }
for n in $pes $pes_list; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench-gpu.sh: PE counts must be positive integers, not '$n'"; exit 2; }
done

gbuild=$root/build-bench-gshmem
nbuild=$root/build-bench-nvshmem
# The device machine gets the tree without .git: pass GSHMEM_COMMIT=<hash> there.
commit=${GSHMEM_COMMIT:-$(git -C "$root" rev-parse --verify -q HEAD 2>/dev/null || echo unknown)}
echo "bench-gpu.sh: $(date -u +%FT%TZ) commit $commit on $(hostname); PES=$pes PES_LIST='$pes_list'" \
     "pattern=$pattern QUICK=${QUICK:-0} ROUNDS=$rounds SUITES=$suites"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader || true
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
for n in $pes $pes_list; do
  if [[ ${ngpu:-0} -gt 0 && $n -gt $ngpu ]]; then
    echo "bench-gpu.sh: warning: $n PEs on $ngpu GPUs: ranks share GPUs (rank r on GPU r % $ngpu)"
  fi
done

build() {
  # NCCL for nccl-bench: torch's pip package nvidia-nccl-cu13 (include/ and lib/), else whatever CMake finds.
  local nccl_home
  nccl_home=$(python3 -c 'import nvidia.nccl as m; print(m.__path__[0])' 2>/dev/null || true)
  [[ -n $nccl_home && -f $nccl_home/include/nccl.h ]] || nccl_home=
  echo "NCCL from ${nccl_home:-the folders of the CUDA toolkit, if any}"
  cmake -S "$root" -B "$gbuild" -DCMAKE_BUILD_TYPE=Release -DGSHMEM_CUDA_ARCHITECTURES=90 \
        -DGSHMEM_BUILD_TESTS=OFF -DGSHMEM_BUILD_EXAMPLES=OFF ${nccl_home:+-DNCCL_HOME="$nccl_home"} >/dev/null
  cmake --build "$gbuild" -j "$jobs" --target gshmem-bench gshmemrun
  if [[ $want_coll == 1 ]]; then
    cmake --build "$gbuild" -j "$jobs" --target nccl-bench || echo "bench-gpu.sh: no nccl-bench (NCCL not found):" \
                                                                "no NCCL column"
  fi
  local nvhome
  nvhome=$(python3 -c 'import nvidia.nvshmem as m; print(m.__path__[0])')
  echo "NVSHMEM from $nvhome"
  cmake -S "$root/bench" -B "$nbuild" -DCMAKE_BUILD_TYPE=Release -DBENCH_BACKEND=nvshmem -DNVSHMEM_HOME="$nvhome" \
        -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  cmake --build "$nbuild" -j "$jobs"
}

# launchN NAME NPES LIMIT_S BINARY ARGS...: NPES ranks by unique id through a file (the gshmem-bench binary picks
# GPU rank % GPU count), each under `timeout LIMIT_S`; fails if any rank fails. Once a rank has failed, the others
# get 10 s to end by themselves, then TERM (KILL 5 s later): a rank left waiting in a barrier for one that exited
# never returns (NVSHMEM's barriers have no timeout, and its unique-id bootstrap has no global exit).
launchN() {
  local name=$1 np=$2 limit=$3 bin=$4
  shift 4
  local uid=$work/uid.$name pids=() rc=0 r p t0=$SECONDS left=$((deadline - SECONDS - 20)) live next failed_at=''
  if [[ $left -lt 10 ]]; then
    echo "bench-gpu.sh: $name ($np PEs) skipped: the time budget (BUDGET_S=$budget) is spent"
    return 1
  fi
  [[ $limit -gt $left ]] && limit=$left
  rm -f "$uid" "$uid.tmp"
  for ((r = 0; r < np; r++)); do
    BENCH_RANK=$r BENCH_NRANKS=$np timeout "$limit" "$bin" --uid-file "$uid" --commit "$commit" "$@" &
    pids+=($!)
  done
  live=("${pids[@]}")
  while [[ ${#live[@]} -gt 0 ]]; do
    next=()
    for p in "${live[@]}"; do
      if kill -0 "$p" 2>/dev/null; then
        next+=("$p")
      else
        wait "$p" || { rc=$?; failed_at=${failed_at:-$SECONDS}; }
      fi
    done
    live=(${next[@]+"${next[@]}"})
    if [[ ${#live[@]} -gt 0 && -n $failed_at && $((SECONDS - failed_at)) -ge 10 ]]; then
      echo "bench-gpu.sh: $name: a rank failed; ending the ${#live[@]} still running"
      kill -TERM "${live[@]}" 2>/dev/null || true
      for ((r = 0; r < 10; r++)); do
        sleep 0.5
        kill -0 "${live[@]}" 2>/dev/null || break
      done
      for p in "${live[@]}"; do kill -KILL -- "-$p" "$p" 2>/dev/null || true; done
      for p in "${live[@]}"; do wait "$p" 2>/dev/null || true; done
      live=()
    fi
    [[ ${#live[@]} -eq 0 ]] || sleep 0.5
  done
  if [[ $rc -eq 0 ]]; then
    echo "bench-gpu.sh: $name ($np PEs) done in $((SECONDS - t0)) s"
  else
    echo "bench-gpu.sh: $name ($np PEs) failed (status $rc) after $((SECONDS - t0)) s"
  fi
  return $rc
}

run() {
  local gbin=$gbuild/bin/gshmem-bench nbin=$nbuild/nvshmem-bench
  # Timing options shared by the main runs and the PE-count sweep.
  local timing=(--repeats 10 --warmup 2 --lat-iters 1000 --signal-sizes 8,64,512,4K,32K,64K,256K,1M)
  local args=(--suite all --sizes 16:1G:4 --ctas 1,8,32,132 --threads 1024 --malloc-sizes 1M,64M,1G)
  local main_limit=${RUN_TIMEOUT:-480} short_limit=90 coll_limit=${COLL_TIMEOUT:-150}
  if [[ ${QUICK:-0} == 1 ]]; then
    timing=(--repeats 5 --warmup 1 --lat-iters 500 --signal-sizes 8,4K,64K)
    args=(--suite all --sizes 16:1G:16 --ctas 1,8,32 --malloc-sizes 1M,1G)
    main_limit=${RUN_TIMEOUT:-200}
  fi
  args+=("${timing[@]}" --pattern "$pattern" ${BENCH_ARGS:-})
  local gi=() ni=() ci=() raw=() status=0 n k
  # Collectives (SUITES has coll): gshmem, NVSHMEM and NCCL, same sizes (the binaries' default, 8 B .. 256 MiB),
  # alternating by round; rows merge into the main file (NCCL as a third column).
  if [[ $want_coll == 1 ]]; then
    local coll=(--suite coll --progress "${timing[@]}" ${BENCH_ARGS:-} ${COLL_ARGS:-}) cbin=$gbuild/bin/nccl-bench
    # A run that failed still merges the JSON it wrote: gshmem-bench exits 3 after rows that failed their check
    # (recorded without a figure) and writes the rows so far when an error ends it.
    for ((k = 1; k <= rounds; k++)); do
      launchN "gshmem-coll$k" "$pes" "$coll_limit" "$gbin" "${coll[@]}" --no-table --json "$work/gshmem-coll$k.json" ||
        status=1
      if [[ -s $work/gshmem-coll$k.json ]]; then gi+=("$work/gshmem-coll$k.json"); fi
      launchN "nvshmem-coll$k" "$pes" "$coll_limit" "$nbin" "${coll[@]}" --no-table \
              --json "$work/nvshmem-coll$k.json" || status=1
      if [[ -s $work/nvshmem-coll$k.json ]]; then ni+=("$work/nvshmem-coll$k.json"); fi
      if [[ -x $cbin ]]; then
        launchN "nccl-coll$k" "$pes" "$coll_limit" "$cbin" "${coll[@]}" --no-table --json "$work/nccl-coll$k.json" ||
          status=1
        if [[ -s $work/nccl-coll$k.json ]]; then ci+=("$work/nccl-coll$k.json"); fi
      fi
    done
    # COLL_AB="NAME=VALUE[,NAME=VALUE] ...": gshmem's coll run once more per item with those settings, then as is
    # again (A2), each printed beside the first round's figures (log.txt; the JSON in raw.tgz), e.g.
    # GSHMEM_COLL_LL_BYTES=0 for the collectives without LL.
    if [[ -n ${COLL_AB:-} && -s $work/gshmem-coll1.json ]]; then
      ab=0
      for setting in ${COLL_AB} as-is-again; do
        ab=$((ab + 1))
        (if [[ $setting != as-is-again ]]; then IFS=',' read -r -a kv <<<"$setting"; export "${kv[@]}"; fi
         launchN "gshmem-coll-ab$ab" "$pes" "$coll_limit" "$gbin" "${coll[@]}" --no-table \
           --json "$work/gshmem-coll-ab$ab.json") || status=1
        [[ -s $work/gshmem-coll-ab$ab.json ]] && python3 - "$work/gshmem-coll1.json" "$work/gshmem-coll-ab$ab.json" \
          "$setting" <<'PY' || true
import json, sys
a, b = (json.load(open(f))["rows"] for f in sys.argv[1:3])
bk = {(r["name"], r["bytes"]): r for r in b}
what = "as is again (A2)" if sys.argv[3] == "as-is-again" else f"with {sys.argv[3]} (B)"
print(f"COLL_AB: gshmem as is (A) and {what}; unit, A, B, B/A")
for r in a:
    o = bk.get((r["name"], r["bytes"]))
    if o and r.get("gshmem") and o.get("gshmem"):
        print(f"{r['name']:52s} {r['bytes']:>10} {r['unit']:5s} {r['gshmem']:10.4g} {o['gshmem']:10.4g} "
              f"{o['gshmem'] / r['gshmem']:6.2f}")
PY
      done
    fi
  fi
  if [[ -n $main_suites ]]; then
    args+=(--suite "$main_suites")
    launchN gshmem "$pes" "$main_limit" "$gbin" "${args[@]}" --json "$out/gshmem.json" || status=1
    launchN nvshmem "$pes" "$main_limit" "$nbin" "${args[@]}" --json "$out/nvshmem.json" || status=1
  else
    rounds=1  # no main runs: no extra rounds of them either
  fi
  for ((k = 2; k <= rounds; k++)); do
    launchN "gshmem-round$k" "$pes" "$main_limit" "$gbin" "${args[@]}" --no-table \
            --json "$work/gshmem-round$k.json" && gi+=("$work/gshmem-round$k.json") || status=1
    launchN "nvshmem-round$k" "$pes" "$main_limit" "$nbin" "${args[@]}" --no-table \
            --json "$work/nvshmem-round$k.json" && ni+=("$work/nvshmem-round$k.json") || status=1
  done
  # Barrier (and ping-pong) latency against the PE count: rows named .../pes=<n>.
  for n in $pes_list; do
    local sweep=(--suite "$pes_suites" --name-pes --no-table "${timing[@]}" ${SWEEP_ARGS:-})
    launchN "gshmem-pes$n" "$n" "$short_limit" "$gbin" "${sweep[@]}" --json "$work/gshmem-pes$n.json" &&
      gi+=("$work/gshmem-pes$n.json") || status=1
    launchN "nvshmem-pes$n" "$n" "$short_limit" "$nbin" "${sweep[@]}" --json "$work/nvshmem-pes$n.json" &&
      ni+=("$work/nvshmem-pes$n.json") || status=1
  done
  # init: one figure per process, so extra processes for each library, cold and with the context made first.
  local i mode init_runs="1 2 3"
  # init rows belong to the main suites (all, or init named)
  grep -qxE 'all|init' < <(tr ',' '\n' <<<"$main_suites") || init_runs=
  for i in $init_runs; do
    for mode in cold preinit; do
      local extra=()
      [[ $mode == preinit ]] && extra=(--cuda-preinit)
      launchN "gshmem-init-$mode$i" "$pes" "$short_limit" "$gbin" --suite init --no-table "${extra[@]}" \
              --json "$work/gshmem-init-$mode$i.json" && gi+=("$work/gshmem-init-$mode$i.json")
      launchN "nvshmem-init-$mode$i" "$pes" "$short_limit" "$nbin" --suite init --no-table "${extra[@]}" \
              --json "$work/nvshmem-init-$mode$i.json" && ni+=("$work/nvshmem-init-$mode$i.json")
    done
  done
  local dev stem
  dev=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | tr 'A-Z ' 'a-z-' | sed 's/nvidia-//' ||
        true)
  # x<GPUs the PEs ran on> (rank r on GPU r % ngpu), and -<n>pe where PEs shared GPUs: a one-GPU run is never
  # named like a 2-GPU one
  local used=$pes
  [[ ${ngpu:-0} -gt 0 && $ngpu -lt $pes ]] && used=$ngpu
  stem=$(date -u +%F)-${dev:-gpu}-x$used
  [[ $used -ne $pes ]] && stem+=-${pes}pe
  local libs=() g=() v=()
  [[ -s $out/gshmem.json ]] && g+=("$out/gshmem.json")
  [[ -s $out/nvshmem.json ]] && v+=("$out/nvshmem.json")
  g+=("${gi[@]}")
  v+=("${ni[@]}")
  [[ ${#g[@]} -gt 0 ]] && libs+=(--lib gshmem "${g[@]}")
  [[ ${#v[@]} -gt 0 ]] && libs+=(--lib nvshmem "${v[@]}")
  [[ ${#ci[@]} -gt 0 ]] && libs+=(--lib nccl "${ci[@]}")
  if [[ ${#libs[@]} -gt 0 ]]; then
    python3 "$root/bench/merge.py" "${libs[@]}" -o "$out/$stem.json" > "$out/table.txt"
    cat "$out/table.txt"
    python3 "$root/bench/plot.py" "$out/$stem.json" -o "$out/$stem.png" || echo "bench-gpu.sh: no plot (see above)"
    if [[ ${#g[@]} -gt 0 && ${#v[@]} -gt 0 ]]; then
      python3 "$root/bench/targets.py" "$out/$stem.json" > "$out/targets.md" && cat "$out/targets.md"
    fi
  fi
  raw=("${gi[@]}" "${ni[@]}" "${ci[@]}")
  for f in "$work"/gshmem-coll-ab*.json; do [[ -s $f ]] && raw+=("$f"); done
  if [[ ${#raw[@]} -gt 0 ]]; then
    tar czf "$out/raw.tgz" -C "$work" "${raw[@]##*/}"
  fi
  return $status
}

case $phase in
  build) build ;;
  run) run ;;
  all) build && run ;;
  *) echo "usage: $0 [build|run|all]"; exit 2 ;;
esac
