#!/usr/bin/env python3
"""Runs a command with exactly seed 000's NVSHMEM environment (NVSHMEM_BOOTSTRAP=MPI, the three IB switches off,
NVSHMEM_REMOTE_TRANSPORT=none) plus NVSHMEM_SYMMETRIC_SIZE, NVSHMEM_DEBUG and NVSHMEM_DISABLE_NVLS, and checks that
it exits 0, prints one PASS per PE, and prints no WARN line.

  seed000_env.py [--gpu] [--profile NAME] [--warn REGEX] -- mpirun -np 2 ./program
With --gpu, exit 77 (skipped) where there is no NVIDIA GPU. --profile deepep: instead, what DeepEP's Buffer sets in
its process before init (low-latency mode, NVLink allowed: NVSHMEM_DISABLE_P2P=0, IBGDA on, 24 queue pairs a PE,
queue depth 1024, 7 teams, NVLS off, 512 MiB granularity, MNNVL off); deepep_no_p2p: the same with
NVSHMEM_DISABLE_P2P=1 (NVLink not allowed). --warn REGEX: exactly one WARN line per PE is expected, and it must
match REGEX. The PE count comes from -np or -n."""
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


DEEPEP = {
    "NVSHMEM_DISABLE_P2P": "0",
    "NVSHMEM_IB_ENABLE_IBGDA": "1",
    "NVSHMEM_IBGDA_NUM_RC_PER_PE": "24",
    "NVSHMEM_QP_DEPTH": "1024",
    "NVSHMEM_MAX_TEAMS": "7",
    "NVSHMEM_DISABLE_NVLS": "1",
    "NVSHMEM_CUMEM_GRANULARITY": str(2 ** 29),
    "NVSHMEM_DISABLE_MNNVL": "1",
}
PROFILES = {"seed000": SEED000, "deepep": DEEPEP, "deepep_no_p2p": dict(DEEPEP, NVSHMEM_DISABLE_P2P="1")}


def main():
    args = sys.argv[1:]
    opts = args[: args.index("--")] if "--" in args else []
    gpu = "--gpu" in opts
    profile = opts[opts.index("--profile") + 1] if "--profile" in opts else "seed000"
    want_warn = opts[opts.index("--warn") + 1] if "--warn" in opts else None
    cmd = args[args.index("--") + 1:] if "--" in args else args
    if gpu and not (os.path.exists("/dev/nvidia0") and shutil.which("nvidia-smi")):
        print("SKIP: no NVIDIA GPU")
        return 77
    env = dict(os.environ)
    for k in list(env):  # only the profile's settings: no GSHMEM_* or other NVSHMEM_* choice may help
        if k.startswith("GSHMEM_") or k.startswith("NVSHMEM_"):
            del env[k]
    env.update(PROFILES[profile])
    print("env:", " ".join("%s=%s" % kv for kv in PROFILES[profile].items()))
    print("run:", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=100)
    out = r.stdout
    sys.stdout.write(out)
    npes = int(cmd[cmd.index("-np") + 1]) if "-np" in cmd else int(cmd[cmd.index("-n") + 1]) if "-n" in cmd else 1
    passes = len(re.findall(r": PASS \(", out))
    warns = [l for l in out.splitlines() if re.search(r"\bWARN\b", l)]
    ok = True
    if r.returncode != 0:
        print("seed000_env: FAIL: exit status %d" % r.returncode)
        ok = False
    if passes != npes:
        print("seed000_env: FAIL: %d PASS lines, expected %d" % (passes, npes))
        ok = False
    if want_warn is None and warns:
        print("seed000_env: FAIL: %d WARN line(s), e.g. %s" % (len(warns), warns[0]))
        ok = False
    if want_warn is not None and (len(warns) != npes or not all(re.search(want_warn, l) for l in warns)):
        print("seed000_env: FAIL: expected one WARN per PE matching %r, got %d: %s" % (want_warn, len(warns), warns))
        ok = False
    if ok:
        print("seed000_env: ok (%s: %d PEs passed, %s)" % (profile, npes,
                                                             "the expected WARN" if want_warn else "no WARN"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
