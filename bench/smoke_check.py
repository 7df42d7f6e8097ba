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
ap.add_argument("--expect-failed", metavar="ROW@BYTES",
                help="the run spoils this collective row (--coll-fault): expect exit 3, that row recorded as failed "
                     "(no figure) and every other row measured")
ap.add_argument("cmd", nargs=argparse.REMAINDER)
a = ap.parse_args()
cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
if os.path.exists(a.json):
    os.remove(a.json)
args = ["--suite", a.suite, "--sizes", "8,4K", "--signal-sizes", "8", "--malloc-sizes", "4K", "--repeats", "2",
        "--warmup", "1", "--iters", "2", "--lat-iters", "10", "--json", a.json]
if a.expect_failed:
    args += ["--coll-fault", a.expect_failed]
r = subprocess.run(cmd + args, timeout=100)
want_rc = 3 if a.expect_failed else 0
if r.returncode != want_rc:
    sys.exit(f"smoke: gshmem-bench exited {r.returncode}, not {want_rc}")
with open(a.json) as f:
    doc = json.load(f)
for key in ("device", "date", "commit", "rows"):
    if key not in doc:
        sys.exit(f"smoke: JSON has no '{key}'")
rows = doc["rows"]
if not rows:
    sys.exit("smoke: no rows")
names = set()
failed = [row for row in rows if row.get("status")]
if a.expect_failed:
    want = [row for row in failed if f"{row['name']}@{row['bytes']}" == a.expect_failed]
    if len(failed) != 1 or not want or not want[0]["status"].startswith("failed") or want[0].get(a.library) is not None:
        sys.exit(f"smoke: expected only {a.expect_failed} failed (no figure), got {failed}")
    rows = [row for row in rows if not row.get("status")]
elif failed:
    sys.exit(f"smoke: rows without a figure: {failed}")
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
