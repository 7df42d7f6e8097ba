#!/usr/bin/env bash
# On the GPU machine (2+ GPUs), gshmem alone, one command: the collectives' stream forms under several
# GSHMEM_COLL_CTA_BYTES x GSHMEM_COLL_CTAS settings (which CTA split wins at which size). Writes $OUT/sweep.md
# (µs per call, a column per setting), the JSON of every run and log.txt. Never uses NVLink multicast.
#   PES=<n> (default 2)   CTA_BYTES="16K 64K 256K 1M"   CTAS="32 132"   SIZES=64K,256K,1M,4M,16M,64M,256M
#   KINDS=<--coll-kinds list> (default every kind)   BUDGET_S=<s> (default 500: no run starts after it)
#   GSHMEM_COMMIT=<hash> (the device machine gets the tree without .git)
#   PREBUILT=1 (under gpu-all.sh, which unpacks it): build-gpu/ as it is, a RelWithDebInfo build (own: Release)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/coll-sweep-out}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PATH=/usr/local/cuda/bin:$PATH GSHMEM_DEVICE=${GSHMEM_DEVICE:-gpu} GSHMEM_WAIT_TIMEOUT=60 GSHMEM_SYMMETRIC_SIZE=4G
deadline=$((SECONDS + ${BUDGET_S:-500}))
pes=${PES:-2}
build=${BUILD:-$root/build-coll-sweep}
commit=${GSHMEM_COMMIT:-$(git -C "$root" rev-parse --verify -q --short HEAD 2>/dev/null || echo unknown)}
echo "coll-sweep-gpu.sh: $(date -u +%FT%TZ) commit $commit, $pes PEs"
nvidia-smi --query-gpu=index,name --format=csv,noheader || true
if [ -n "${PREBUILT:-}" ]; then  # gpu-all.sh unpacked the carried build (scripts/gpu-prebuilt.sh)
  build=$root/build-gpu
else
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGSHMEM_CUDA_ARCHITECTURES=90 -DGSHMEM_BUILD_TESTS=OFF \
    -DGSHMEM_BUILD_EXAMPLES=OFF >/dev/null || exit 1
  cmake --build "$build" -j"$(nproc)" --target gshmem-bench gshmemrun >"$out/build.txt" 2>&1 ||
    { tail -30 "$out/build.txt"; exit 1; }
fi
bench=("$build/bin/gshmemrun" -n "$pes" -- "$build/bin/gshmem-bench" --suite coll --progress --no-table
       --repeats 5 --warmup 1 --commit "$commit")
kinds=()
[[ -n ${KINDS:-} ]] && kinds=(--coll-kinds "$KINDS")
rc=0
run() {  # NAME TIMEOUT ARGS... (env assignments before the call)
  local name=$1 limit=$2
  shift 2
  if ((SECONDS + 10 > deadline)); then echo "coll-sweep-gpu.sh: $name skipped: BUDGET_S spent"; return 1; fi
  ((SECONDS + limit > deadline)) && limit=$((deadline - SECONDS))
  echo "=== $name"
  timeout "$limit" "$@" --json "$out/$name.json" || { echo "coll-sweep-gpu.sh: $name failed (status $?)"; rc=1; return 1; }
}
names=()
for cb in ${CTA_BYTES:-16K 64K 256K 1M}; do
  for n in ${CTAS:-32 132}; do
    GSHMEM_COLL_CTA_BYTES=$cb GSHMEM_COLL_CTAS=$n run "stream-b$cb-c$n" 90 "${bench[@]}" --coll-forms stream \
      --sizes "${SIZES:-64K,256K,1M,4M,16M,64M,256M}" "${kinds[@]}"
    # a run with a failed row (gshmem-bench exits 3) still wrote every other row
    [[ -s $out/stream-b$cb-c$n.json ]] && names+=("stream-b$cb-c$n")
  done
done
python3 - "$out" "${names[@]}" >"$out/sweep.md" <<'EOF'
import json, sys
out, names = sys.argv[1], sys.argv[2:]
def rows(n):
    try:
        d = json.load(open(f"{out}/{n}.json"))
    except (OSError, ValueError):
        return {}
    return {(r["name"], r["bytes"]): r[d["library"]] for r in d["rows"] if r.get("unit") == "us"}
runs = {n: rows(n) for n in names}
keys = sorted({k for v in runs.values() for k in v}, key=lambda k: (k[0], k[1]))
print("| row | bytes | " + " | ".join(n.replace("stream-", "") for n in names) + " |")
print("|---|---|" + "---|" * len(names))
for k in keys:
    vals = [runs[n].get(k) for n in names]
    if all(v is None for v in vals):  # a row every setting failed or skipped (its status is in the JSON)
        continue
    best = min(v for v in vals if v is not None)
    cells = [("**%.1f**" if v == best else "%.1f") % v if v is not None else "-" for v in vals]
    print(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + " |")
EOF
cat "$out/sweep.md"
exit $rc
