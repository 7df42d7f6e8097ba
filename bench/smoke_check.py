#!/usr/bin/env python3
"""Smoke test of gshmem-bench (CTest label bench): runs the launcher command given after '--' with tiny sizes
and checks that the JSON parses and has well-formed rows. Not a timing test: values only need to be finite."""
import argparse
import json
import math
import os
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--json", required=True)
ap.add_argument("--library", default="gshmem")
ap.add_argument("--suite", default="all", help="gshmem-bench --suite (default all)")
ap.add_argument("--want", default="init,host_put_bw,host_get_bw,host_barrier_all,malloc",
                help="row families (name up to the first /) that must be there")
ap.add_argument("cmd", nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
if os.path.exists(a.json):
    os.remove(a.json)
args = ["--suite", a.suite, "--sizes", "8,4K", "--signal-sizes", "8", "--malloc-sizes", "4K", "--repeats", "2",
        "--warmup", "1", "--iters", "2", "--lat-iters", "10", "--json", a.json]
r = subprocess.run(cmd + args, timeout=100)
if r.returncode != 0:
    sys.exit(f"smoke: gshmem-bench exited {r.returncode}")
with open(a.json) as f:
    doc = json.load(f)
for key in ("device", "date", "commit", "rows"):
    if key not in doc:
        sys.exit(f"smoke: JSON has no '{key}'")
rows = doc["rows"]
if not rows:
    sys.exit("smoke: no rows")
names = set()
for row in rows:
    for key in ("name", "bytes", "unit", a.library, "repeats"):
        if key not in row:
            sys.exit(f"smoke: row {row} has no '{key}'")
    if row["unit"] not in ("GB/s", "us", "ms", "Mop/s"):
        sys.exit(f"smoke: row {row['name']} has unit {row['unit']}")
    v = row[a.library]
    if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        sys.exit(f"smoke: row {row['name']} has value {v}")
    names.add(row["name"].split("/")[0])
for want in a.want.split(","):
    if want not in names:
        sys.exit(f"smoke: no {want} row (have {sorted(names)})")
print(f"smoke: {len(rows)} rows OK ({', '.join(sorted(names))})")
