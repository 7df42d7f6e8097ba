#!/usr/bin/env python3
"""Runs a command with exactly seed 000's NVSHMEM environment (NVSHMEM_BOOTSTRAP=MPI, the three IB switches off,
NVSHMEM_REMOTE_TRANSPORT=none) plus NVSHMEM_SYMMETRIC_SIZE, NVSHMEM_DEBUG and NVSHMEM_DISABLE_NVLS, and checks that
it exits 0, prints one PASS per PE, and prints no WARN line.

  seed000_env.py [--gpu] -- mpirun -np 2 ./program
With --gpu, exit 77 (skipped) where there is no NVIDIA GPU."""
import os
import re
import shutil
import subprocess
import sys

SEED000 = {
    "NVSHMEM_BOOTSTRAP": "MPI",
    "NVSHMEM_DISABLE_IBRC": "1",
    "NVSHMEM_DISABLE_IBGDA": "1",
    "NVSHMEM_DISABLE_IBDEVX": "1",
    "NVSHMEM_REMOTE_TRANSPORT": "none",
    "NVSHMEM_SYMMETRIC_SIZE": "256M",
    "NVSHMEM_DEBUG": "WARN",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def main():
    args = sys.argv[1:]
    gpu = "--gpu" in args[: args.index("--")] if "--" in args else False
    cmd = args[args.index("--") + 1:] if "--" in args else args
    if gpu and not (os.path.exists("/dev/nvidia0") and shutil.which("nvidia-smi")):
        print("SKIP: no NVIDIA GPU")
        return 77
    env = dict(os.environ)
    env.update(SEED000)
    for k in list(env):  # only seed 000's settings: no GSHMEM_* choice may help
        if k.startswith("GSHMEM_"):
            del env[k]
    print("env:", " ".join("%s=%s" % kv for kv in SEED000.items()))
    print("run:", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=100)
    out = r.stdout
    sys.stdout.write(out)
    npes = int(cmd[cmd.index("-np") + 1]) if "-np" in cmd else 1
    passes = len(re.findall(r": PASS \(", out))
    warns = [l for l in out.splitlines() if re.search(r"\bWARN\b", l)]
    ok = True
    if r.returncode != 0:
        print("seed000_env: FAIL: exit status %d" % r.returncode)
        ok = False
    if passes != npes:
        print("seed000_env: FAIL: %d PASS lines, expected %d" % (passes, npes))
        ok = False
    if warns:
        print("seed000_env: FAIL: %d WARN line(s), e.g. %s" % (len(warns), warns[0]))
        ok = False
    if ok:
        print("seed000_env: ok (%d PEs passed, no WARN)" % npes)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
