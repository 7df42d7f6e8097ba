#!/usr/bin/env python3
"""Checks libnvshmem_host.so.3 (src/nvshmem_abi) against NVIDIA NVSHMEM 3.4.5's: every name NVIDIA's
libnvshmem_host.so.3 exports (nvshmem-3.4.5-host-exports.txt: its 1479 dynamic function symbols, read with nm -D
from the nvidia-nvshmem-cu13 3.4.5 wheel: 1476 public names and the 3 nvshmemid_* entry points of its device
library) is exported here as a function of version NVSHMEM, except the
ones MISSING names (each with why); those must really be missing (so the list stays true); and nothing but
nvshmem* names is exported.

Usage: check_exports.py --nm nm --lib libnvshmem_host.so.3
"""
import argparse
import os
import subprocess
import sys

# NVSHMEM 3.4.5 exports gshmem has no function for (src/nvshmem_abi/README.md).
MISSING = {}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nm", required=True)
    ap.add_argument("--lib", required=True)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "nvshmem-3.4.5-host-exports.txt"), encoding="utf-8") as f:
        theirs = [line.strip() for line in f if line.strip()]
    out = subprocess.run([a.nm, "-D", "--defined-only", a.lib], check=True, capture_output=True, text=True).stdout
    ours, versions, other = set(), {}, []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] == "A":  # the version node's own symbol
            continue
        name, _, version = parts[2].partition("@")
        if not name.startswith("nvshmem"):
            other.append(name)
            continue
        if parts[1] in ("T", "W"):
            ours.add(name)
            versions[name] = version.lstrip("@")
    errors = []
    lacking = [n for n in theirs if n not in ours and n not in MISSING]
    if lacking:
        errors.append(f"{len(lacking)} of NVSHMEM 3.4.5's host exports are not exported: {' '.join(lacking[:30])}")
    stale = [n for n in MISSING if n in ours]
    if stale:
        errors.append(f"listed as missing but exported (remove them from MISSING and the README): {' '.join(stale)}")
    unversioned = sorted(n for n in ours if versions.get(n) != "NVSHMEM")
    if unversioned:
        errors.append(f"{len(unversioned)} exports lack version NVSHMEM: {' '.join(unversioned[:20])}")
    if other:
        errors.append(f"exports that are not NVSHMEM names (the version script should hide them): {' '.join(other[:20])}")
    if errors:
        print("check_exports.py: FAIL\n  " + "\n  ".join(errors))
        return 1
    print(f"check_exports.py: PASS: {len(ours)} NVSHMEM names exported; of NVSHMEM 3.4.5's {len(theirs)} host "
          f"exports all but {len(MISSING)} ({', '.join(sorted(MISSING))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
