#!/usr/bin/env python3
"""Runs a command and fails if it left anything behind: any new entry in /dev/shm, any new entry in /tmp whose
name contains "gshmem", or a process still running whose command line holds the tested program's path.

  leak_check.py [--rc any|0] [--program PATH] -- cmd args...

--rc 0 (default): the command must also succeed; --rc any: its status does not matter (e.g. a job with a
killed PE, whose leftovers are what is checked). Run it alone (CTest RUN_SERIAL): other jobs create files too.
"""
import argparse
import os
import subprocess
import sys
import time


def snapshot():
    shm = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    tmp = {e for e in os.listdir("/tmp") if "gshmem" in e.lower()}
    return shm, tmp


def processes_running(path):
    found = []
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if any(arg.decode(errors="replace") == path for arg in argv):
            found.append(f"pid {pid}: {' '.join(x.decode(errors='replace') for x in argv if x)}")
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rc", choices=["0", "any"], default="0")
    ap.add_argument("--program", default=None, help="path of the PE program (default: the last path-like argument)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command given")
    program = a.program or next((x for x in reversed(cmd) if os.path.isabs(x) and os.path.isfile(x)), None)
    shm0, tmp0 = snapshot()
    print(f"leak_check: /dev/shm has {len(shm0)} entries, /tmp {len(tmp0)} named *gshmem*; running: {' '.join(cmd)}",
          flush=True)
    rc = subprocess.call(cmd)
    failures = []
    if a.rc == "0" and rc != 0:
        failures.append(f"the command failed (exit {rc})")
    # give killed processes' cleanup a moment
    deadline = time.monotonic() + 3.0
    while True:
        shm1, tmp1 = snapshot()
        left = processes_running(program) if program else []
        if (not (shm1 - shm0) and not (tmp1 - tmp0) and not left) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for e in sorted(shm1 - shm0):
        failures.append(f"new entry left in /dev/shm: {e}")
    for e in sorted(tmp1 - tmp0):
        failures.append(f"new entry left in /tmp: {e}")
    for p in left:
        failures.append(f"process left running: {p}")
    for f in failures:
        print(f"leak_check: FAIL: {f}", flush=True)
    if not failures:
        print(f"leak_check: PASS (command exit {rc}; nothing left in /dev/shm or /tmp, no process left)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
