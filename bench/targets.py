#!/usr/bin/env python3
"""Issue 4's and issue 16's goals against a merged side-by-side file (bench-gpu.sh's <date>-<device>-x<GPUs>.json).

  targets.py merged.json [--tolerance 0.02]

Prints a Markdown table of the goals (each with the row it is judged on, gshmem's and NVSHMEM's figures and whether
it is met; for the collective goals NCCL's figure too, where the file has an nccl column), then every other row where
gshmem is behind NVSHMEM: "behind" below 1 - tolerance, "equal" within the
tolerance. The goals are set for 2 PEs on 2 GPUs (nvidia-h200-x2): a file from fewer GPUs or PEs (one PE, or PEs
sharing a GPU, whose "peer" rows never cross NVLink) gets its figures listed with "not judged" instead of a verdict.
Exit status 0 whatever it finds: it reports, the notes decide."""
import argparse
import json
import sys

GIB = 1 << 30
MIB = 1 << 20
KIB = 1 << 10


def rows_by_key(doc):
    """Rows with a gshmem figure (a row gshmem ran without one, "status", counts as missing)."""
    return {(r["name"], r["bytes"]): r for r in doc["rows"] if "gshmem" in r}


def best(doc, prefix, suffix, nbytes):
    """The row of the best gshmem figure among names prefix<anything>suffix at nbytes (e.g. the best CTA count)."""
    cands = [r for r in doc["rows"] if r["name"].startswith(prefix) and r["name"].endswith(suffix)
             and r["bytes"] == nbytes and "gshmem" in r]
    return max(cands, key=lambda r: r["gshmem"]) if cands else None


def fastest(doc, prefix, nbytes):
    """The row of the lowest gshmem time among names prefix<anything> (not busbw) at nbytes (e.g. the best thread
    count of a block-scope collective)."""
    cands = [r for r in doc["rows"] if r["name"].startswith(prefix) and not r["name"].endswith("/busbw")
             and r["bytes"] == nbytes and "gshmem" in r and r["unit"] == "us"]
    return min(cands, key=lambda r: r["gshmem"]) if cands else None


def goals(doc):
    """(goal text, row or None, predicate on the row, how the row was chosen)."""
    k = rows_by_key(doc)
    put1 = k.get(("put_bw/block/ctas=1/threads=1024/uni", 16 * MIB))
    return [
        ("device put 256 MiB >= 390 GB/s", best(doc, "put_bw/block/ctas=", "/uni", 256 * MIB),
         lambda r: r["gshmem"] >= 390, "block scope, best CTA count"),
        ("one-CTA put 16 MiB >= 2x NVSHMEM", put1,
         lambda r: "nvshmem" in r and r["gshmem"] >= 2 * r["nvshmem"], "block scope, 1 CTA x 1024"),
        ("get 256 MiB >= 380 GB/s", best(doc, "get_bw/block/ctas=", "/uni", 256 * MIB),
         lambda r: r["gshmem"] >= 380, "block scope, best CTA count"),
        ("p ping-pong <= 0.9 us", k.get(("p_pingpong", 4)), lambda r: r["gshmem"] <= 0.9, "half round trip"),
        ("put+signal 8 B ping-pong <= 1.5 us", k.get(("put_signal_pingpong/threads=1024", 8)),
         lambda r: r["gshmem"] <= 1.5, "half round trip"),
        ("barrier_all in a kernel <= 1.5 us", k.get(("barrier_all_thread", 0)), lambda r: r["gshmem"] <= 1.5,
         "one thread per PE"),
        ("barrier_all in a kernel <= 1.5 us", k.get(("barrier_all_block/threads=128", 0)),
         lambda r: r["gshmem"] <= 1.5, "one CTA per PE"),
        ("barrier_all_on_stream <= 3.0 us", k.get(("barrier_all_on_stream", 0)), lambda r: r["gshmem"] <= 3.0, ""),
        ("init for 2 PEs <= 100 ms", k.get(("init", 0)), lambda r: r["gshmem"] <= 100, "cold process"),
        ("init for 2 PEs <= 100 ms", k.get(("init/cuda-preinit", 0)), lambda r: r["gshmem"] <= 100,
         "CUDA context made first"),
        # issue 16: collectives (suite coll; allreduce is NVSHMEM's reduce; sizes as NCCL counts them)
        ("allreduce f32 1 KiB on a stream <= 4.5 us", k.get(("reduce_on_stream/sum/float", KIB)),
         lambda r: r["gshmem"] <= 4.5, "float_sum_reduce_on_stream"),
        ("allreduce f32 16 MiB on a stream <= 55 us", k.get(("reduce_on_stream/sum/float", 16 * MIB)),
         lambda r: r["gshmem"] <= 55, "float_sum_reduce_on_stream"),
        ("allreduce f32 256 MiB busbw >= 340 GB/s", k.get(("reduce_on_stream/sum/float/busbw", 256 * MIB)),
         lambda r: r["gshmem"] >= 340, "on a stream"),
        ("alltoall 1 KiB on a stream <= 4.5 us", k.get(("alltoall_on_stream/mem", KIB)),
         lambda r: r["gshmem"] <= 4.5, "alltoallmem_on_stream, 1 KiB per PE in all"),
        ("alltoall 16 MiB on a stream <= 45 us", k.get(("alltoall_on_stream/mem", 16 * MIB)),
         lambda r: r["gshmem"] <= 45, "alltoallmem_on_stream"),
        ("block-scope allreduce 1 KiB in a kernel <= 3 us", fastest(doc, "reduce_block/sum/float/", KIB),
         lambda r: r["gshmem"] <= 3, "one CTA, best thread count"),
    ]


def goal_scale(doc):
    """(PEs, GPUs) of the run; files written before gshmem-bench recorded "gpus" had one GPU per PE."""
    pes = doc.get("pes") or 0
    return pes, doc.get("gpus", pes) or 0


def fmt(v):
    return "-" if v is None else f"{v:.4g}"


def size(n):
    if not n:
        return "-"
    for unit, div in (("GiB", GIB), ("MiB", MIB), ("KiB", 1024)):
        if n >= div and n % div == 0:
            return f"{n // div} {unit}"
    return f"{n} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("merged", help="merged JSON from bench/merge.py (libraries gshmem and nvshmem)")
    ap.add_argument("--tolerance", type=float, default=0.02,
                    help="advantage within 1 +- this counts as equal (default 0.02)")
    a = ap.parse_args()
    with open(a.merged) as f:
        doc = json.load(f)
    if doc.get("libraries", [])[:2] != ["gshmem", "nvshmem"]:
        sys.exit(f"targets.py: {a.merged} does not compare gshmem with nvshmem (libraries {doc.get('libraries')})")

    print(f"{doc.get('device')}, commit {doc.get('commit')}, {doc.get('date')}\n")
    pes, gpus = goal_scale(doc)
    judge = pes >= 2 and gpus >= 2
    if not judge:
        print(f"Goals not judged: they are set for 2 PEs on 2 GPUs, and this run had {pes} PE(s) on {gpus} GPU(s), "
              "so its peer rows never crossed NVLink.\n")
    print("| goal | row | gshmem | NVSHMEM | met |")
    print("|---|---|---|---|---|")
    judged = set()
    for text, row, ok, how in goals(doc):
        if row is None:
            print(f"| {text} | (no row in this file) | - | - | - |")
            continue
        judged.add((row["name"], row["bytes"]))
        if "nccl" in row:
            how = f"{how}; NCCL {fmt(row['nccl'])} {row['unit']}" if how else f"NCCL {fmt(row['nccl'])} {row['unit']}"
        if "host_us" in row:  # the host's wall time per call: a figure about equal to it is bound by the host
            host = " / ".join(fmt(row["host_us"].get(lib)) for lib in ("gshmem", "nvshmem"))
            how = f"{how}; host us per call {host}" if how else f"host us per call {host}"
        label = f"`{row['name']}` {size(row['bytes'])}" + (f" ({how})" if how else "")
        print(f"| {text} | {label} | {fmt(row.get('gshmem'))} {row['unit']} | {fmt(row.get('nvshmem'))} | "
              f"{('yes' if ok(row) else 'no') if judge else 'not judged'} |")

    floor = rows_by_key(doc).get(("empty_kernel_on_stream", 0))
    if floor:  # no library in it: what one kernel launch a call costs on this host, back to back
        print(f"\nThis host's floor under the stream rows: an empty kernel launched back to back, "
              f"{fmt(floor['gshmem'])} us per launch (host {fmt(floor.get('host_us', {}).get('gshmem'))} us).")

    # Rows gshmem ran without a figure (merge.py's "status": a failed result check, or skipped): a goal on one of
    # them reads "(no row in this file)" above, so say why here.
    unmeasured = [r for r in doc["rows"] if "gshmem" in r.get("status", {})]
    if unmeasured:
        print(f"\ngshmem rows without a figure ({len(unmeasured)}):\n\n| row | size | why |\n|---|---|---|")
        for r in unmeasured:
            print(f"| `{r['name']}` | {size(r['bytes'])} | {r['status']['gshmem']} |")

    # rows no library is in (the host's empty-kernel launch floor): measured in both builds, compared by neither
    no_library = {"empty_kernel_on_stream"}
    behind, equal = [], []
    for r in doc["rows"]:
        if "advantage" not in r or (r["name"], r["bytes"]) in judged or r["name"] in no_library:
            continue
        if r["advantage"] < 1 - a.tolerance:
            behind.append(r)
        elif r["advantage"] < 1:
            equal.append(r)
    total = sum(1 for r in doc["rows"] if "advantage" in r and r["name"] not in no_library)
    print(f"\nOther rows: {total} compared; {len(behind)} behind by more than {a.tolerance:.0%}, {len(equal)} "
          f"behind within it (equal), the rest at or ahead.")
    for title, rows in (("behind", behind), ("equal within the tolerance", equal)):
        if not rows:
            continue
        print(f"\n{title}:\n\n| row | size | gshmem | NVSHMEM | unit | advantage |\n|---|---|---|---|---|---|")
        for r in sorted(rows, key=lambda r: r["advantage"]):
            print(f"| `{r['name']}` | {size(r['bytes'])} | {fmt(r['gshmem'])} | {fmt(r['nvshmem'])} | {r['unit']} | "
                  f"{r['advantage']:.3f}x |")


if __name__ == "__main__":
    main()
