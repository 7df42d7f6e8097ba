#!/usr/bin/env python3
"""Join gshmem-bench JSON files of two (or more) libraries into one side-by-side file and print the table.

  merge.py --lib gshmem g1.json [g2.json ...] --lib nvshmem n1.json [...] -o merged.json

Rows are matched on (name, bytes, unit). Where one library has several files (e.g. init measured in several
processes), its value is the median over them and `repeats` adds up. `ratio` is first library / second library;
`advantage` is how many times better the first library is (ratio for GB/s and Mop/s, 1/ratio for us and ms).
Rows measured on every PE (all-to-all bandwidth) also carry `min_over_pes` {library: the slowest PE's figure};
every row keeps `pes`, the PE count it ran with (runs at several counts have names ending in /pes=<n>).
With three or more libraries (gshmem, NVSHMEM, NCCL for the collective rows), `advantage_over` {library: times the
first library is better} compares the first with each of the others, and the table gets a column per extra one.
Collective busbw rows carry `algbw` {library: GB/s}; stream rows `host_us` {library: the host's wall time per call,
us: a row whose time per call is about its host time is bound by the host}. A row a library ran without a figure (its value null: a failed
result check, or skipped) carries `status` {library: why}, and the table shows the reason after the figures."""
import argparse
import datetime
import json
import os
import statistics
import sys

HIGHER_BETTER = {"GB/s", "Mop/s"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", nargs="+", action="append", required=True, metavar=("NAME", "FILE"),
                    help="a library name and its JSON files")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--device", help="device text for the merged file (default: the first file's)")
    a = ap.parse_args()

    libs, sources, order = [], [], []
    values = {}  # key -> lib -> [values]
    meta = {}  # key -> (repeats per lib, how)
    first = None
    for spec in a.lib:
        if len(spec) < 2:
            sys.exit("merge: --lib needs a name and at least one file")
        lib, files = spec[0], spec[1:]
        libs.append(lib)
        for path in files:
            with open(path) as f:
                doc = json.load(f)
            first = first or doc
            sources.append({"library": lib, "file": os.path.basename(path), "device": doc.get("device"), "date": doc.get("date"),
                            "commit": doc.get("commit"), "argv": doc.get("argv")})
            col = doc.get("library", lib)
            for row in doc["rows"]:
                key = (row["name"], row["bytes"], row["unit"])
                if key not in values:
                    values[key] = {}
                    meta[key] = {"repeats": {}, "how": row.get("how", ""), "pes": row.get("pes", doc.get("pes")),
                                 "min_over_pes": {}, "algbw": {}, "host_us": {}, "status": {}}
                    order.append(key)
                v = row.get(col, row.get(lib))
                if v is None:
                    if row.get("status"):
                        meta[key]["status"].setdefault(lib, row["status"])
                    continue
                values[key].setdefault(lib, []).append(v)
                meta[key]["repeats"][lib] = meta[key]["repeats"].get(lib, 0) + row.get("repeats", 1)
                if row.get("min_over_pes") is not None:
                    meta[key]["min_over_pes"].setdefault(lib, []).append(row["min_over_pes"])
                for side in ("algbw", "host_us"):
                    if row.get(side) is not None:
                        meta[key][side].setdefault(lib, []).append(row[side])

    rows = []
    for key in order:
        name, nbytes, unit = key
        out = {"name": name, "bytes": nbytes, "unit": unit}
        for lib in libs:
            if lib in values[key]:
                out[lib] = statistics.median(values[key][lib])
        if len(libs) >= 2 and libs[0] in out and libs[1] in out and out[libs[1]] > 0 and out[libs[0]] > 0:
            ratio = out[libs[0]] / out[libs[1]]
            out["ratio"] = ratio
            out["advantage"] = ratio if unit in HIGHER_BETTER else 1 / ratio
        if len(libs) >= 3 and out.get(libs[0], 0) > 0:
            over = {lib: (out[libs[0]] / out[lib] if unit in HIGHER_BETTER else out[lib] / out[libs[0]])
                    for lib in libs[1:] if out.get(lib, 0) > 0}
            if over:
                out["advantage_over"] = over
        out["repeats"] = meta[key]["repeats"]
        if meta[key]["pes"] is not None:
            out["pes"] = meta[key]["pes"]
        if meta[key]["min_over_pes"]:
            out["min_over_pes"] = {lib: statistics.median(v) for lib, v in meta[key]["min_over_pes"].items()}
        for side in ("algbw", "host_us"):
            if meta[key][side]:
                out[side] = {lib: statistics.median(v) for lib, v in meta[key][side].items()}
        status = {lib: why for lib, why in meta[key]["status"].items() if lib not in out}
        if status:
            out["status"] = status
        out["how"] = meta[key]["how"]
        rows.append(out)

    merged = {
        "device": a.device or first.get("device"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": next((s["commit"] for s in sources if s["library"] == libs[0]), first.get("commit")),
        "pes": first.get("pes"),
        **({"gpus": first["gpus"]} if first.get("gpus") is not None else {}),
        "libraries": libs,
        "ratio": f"{libs[0]} / {libs[1]}" if len(libs) >= 2 else None,
        "advantage": f"times {libs[0]} is better than {libs[1]} (>1: {libs[0]} ahead)" if len(libs) >= 2 else None,
        "sources": sources,
        "rows": rows,
    }
    with open(a.output, "w") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")

    w = max(len(r["name"]) for r in rows)
    head = f"{'name':<{w}} {'bytes':>10} {'unit':<6}" + "".join(f" {lib:>10}" for lib in libs)
    if len(libs) >= 2:
        head += f" {'advantage':>10}"
    extra = libs[2:]  # a column "vs <lib>" each: how many times the first library is better than it
    head += "".join(f" {'vs ' + lib:>10}" for lib in extra)
    print(head)
    for r in rows:
        line = f"{r['name']:<{w}} {r['bytes'] or '-':>10} {r['unit']:<6}"
        line += "".join(f" {r[lib]:>10.4g}" if lib in r else f" {'-':>10}" for lib in libs)
        if "advantage" in r:
            line += f" {r['advantage']:>9.2f}x"
        elif "min_over_pes" in r or extra:
            line += f" {'':>10}"
        for lib in extra:
            adv = r.get("advantage_over", {}).get(lib)
            line += f" {adv:>9.2f}x" if adv is not None else f" {'':>10}"
        if "min_over_pes" in r:
            line += "  min over PEs " + " / ".join(f"{r['min_over_pes'][lib]:.4g}" if lib in r["min_over_pes"]
                                                   else "-" for lib in libs)
        if "host_us" in r:
            line += "  host us " + " / ".join(f"{r['host_us'][lib]:.3g}" if lib in r["host_us"] else "-"
                                              for lib in libs)
        for lib, why in r.get("status", {}).items():
            line += f"  {lib}: {why}"
        print(line)


if __name__ == "__main__":
    main()
