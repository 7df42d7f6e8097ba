#!/usr/bin/env python3
"""Joins core_bench.py's JSON files (gshmem, nvshmem4py, torch.distributed) into one Markdown table.

  python3 bench/python/merge.py gshmem.json nvshmem.json torch.json [more.json ...] [-o table.md]

Each file names its library ("lib"). Rows are matched on (name, size); where a library has a row in several files
(import_init measured in several processes) its figure is the median of them. The ratio columns are
nvshmem4py / gshmem and torch / gshmem of the figure (µs per call; ms for import_init): above 1, gshmem is faster.
The host µs per call columns are the time to issue one call (no synchronisation). Standard library only.
"""
import argparse
import json
import statistics
import sys

LIBS = ("gshmem", "nvshmem", "torch")
TITLES = {"gshmem": "gshmem", "nvshmem": "nvshmem4py", "torch": "torch (NCCL)"}
# Row order of the table (then any other row, in the order first seen), each by size.
ORDER = ("import_init", "import_init/cold", "import_init/env", "import_init/env/cold", "tensor", "free_tensor",
         "allreduce/sum/float32", "alltoall", "broadcast", "put", "barrier_all")


def load(path):
    """(meta, rows) of one file: core_bench's {..., "rows": [...]} or a bare list of rows."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"merge: {path}: {e}")
    if isinstance(doc, list):
        return {}, doc
    return doc, doc.get("rows", [])


def fmt_size(n):
    if not n:
        return "-"
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt(v):
    if v is None:
        return "—"
    return f"{v:.0f}" if v >= 1000 else f"{v:.1f}" if v >= 100 else f"{v:.2f}"


def ratio(other, mine):
    return f"{other / mine:.2f}" if other is not None and mine else "—"


def median(values):
    return statistics.median(values) if values else None


def merge(paths):
    """(markdown text, number of rows) of the files at `paths`."""
    names, values, host, units, python = [], {}, {}, {}, {}
    metas, notes, hows = {}, [], {}
    for path in paths:
        meta, rows = load(path)
        file_lib = meta.get("lib")
        if file_lib:
            metas.setdefault(file_lib, []).append(meta)
            notes += [(file_lib, n) for n in meta.get("notes", []) if (file_lib, n) not in notes]
        for row in rows:
            lib = row.get("lib", file_lib)
            if lib not in LIBS:
                sys.exit(f"merge: {path}: a row of library {lib!r}; libraries: {', '.join(LIBS)}")
            if row["name"] not in names:
                names.append(row["name"])
            key = (row["name"], row.get("size_bytes", 0))
            units[key] = row.get("unit", "us")
            values.setdefault(key, {}).setdefault(lib, []).append(row["value"])
            if row.get("host_us_per_call") is not None:
                host.setdefault(key, {}).setdefault(lib, []).append(row["host_us_per_call"])
            if lib == "gshmem" and row.get("python_us_per_call") is not None:
                python.setdefault(key, []).append(row["python_us_per_call"])
            if lib == "torch" and row.get("how") and row["how"] not in hows.values():
                hows.setdefault(row["name"], row["how"])

    lines = ["| row | size | " + " | ".join(f"{TITLES[lib]}" for lib in LIBS) +
             " | nvshmem4py / gshmem | torch / gshmem | " +
             " | ".join(f"host µs/call {TITLES[lib]}" for lib in LIBS) + " | of which gshmem.core's Python |",
             "|---|---|" + "---:|" * 3 + "---:|---:|" + "---:|" * 3 + "---:|"]
    rank = {name: i for i, name in enumerate(ORDER + tuple(n for n in names if n not in ORDER))}
    keys = sorted(values, key=lambda k: (rank[k[0]], k[1]))
    for key in keys:
        name, size = key
        v = {lib: median(values[key].get(lib, [])) for lib in LIBS}
        h = {lib: median(host.get(key, {}).get(lib, [])) for lib in LIBS}
        label = f"{name} (ms)" if units[key] == "ms" else name
        lines.append(f"| {label} | {fmt_size(size)} | " + " | ".join(fmt(v[lib]) for lib in LIBS) +
                     f" | {ratio(v['nvshmem'], v['gshmem'])} | {ratio(v['torch'], v['gshmem'])} | " +
                     " | ".join(fmt(h[lib]) for lib in LIBS) + f" | {fmt(median(python.get(key, [])))} |")

    out = ["Figures: µs per call (CUDA events around back-to-back calls on one stream, median of samples; rank 0's), "
           "ms for import_init. Ratio above 1: gshmem is faster.", ""]
    pes = set()
    for lib in LIBS:
        for meta in metas.get(lib, [])[:1]:
            pes.add(meta.get("pes"))
            runs = len(metas[lib])
            out.append(f"- {TITLES[lib]}: {meta.get('version', '?')}; {meta.get('pes')} PE(s) on {meta.get('gpus')} "
                       f"GPU(s), {meta.get('device', '?')}; {meta.get('date', '?')}" +
                       (f"; commit {meta['commit']}" if meta.get("commit") else "") +
                       (f"; {runs} files" if runs > 1 else ""))
        if lib not in metas:
            out.append(f"- {TITLES[lib]}: no file")
    if len(pes) > 1:
        out.append(f"- warning: the files ran with different PE counts ({sorted(pes, key=str)}): not comparable")
    out += ["", *lines, ""]
    for name, how in hows.items():
        out.append(f"- torch {name}: {how}")
    for lib, text in notes:
        out.append(f"- {TITLES[lib]}: {text}")
    return "\n".join(out) + "\n", len(keys)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="core_bench.py --json files, any libraries, any order")
    ap.add_argument("-o", "--output", help="also write the table there")
    a = ap.parse_args(argv)
    text, count = merge(a.files)
    if count == 0:
        sys.exit("merge: no rows in " + ", ".join(a.files))
    sys.stdout.write(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
