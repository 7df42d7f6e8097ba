#!/usr/bin/env python3
"""torchrun-style launcher for gshmem tests: starts N processes of a program with the environment torchrun gives
(RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR=127.0.0.1, MASTER_PORT=<a free port>)
and no gshmemrun or MPI variables, so the library must find its peers through that environment alone. Unlike
gshmemrun it never kills a PE because another failed: a dead PE must be noticed by the others themselves.

  torchrun_env.py --nproc 4 -- prog args...                 every process must exit 0
  torchrun_env.py --nproc 3 --expect dead --victim 1 -- prog kill 1
      the victim must exit non-zero (killed or _exit) and every other process must exit non-zero within
      --deadline seconds (default 30) of the victim's death
  torchrun_env.py --nproc 3 --expect hang --victim 1 -- prog hang 1 15
      the others must exit non-zero within --deadline seconds of the start; the victim must end non-zero too
  torchrun_env.py --nproc 3 --expect fail --count 3:REGEX -- prog args...
      every process must exit non-zero within --deadline seconds of the start (a bad input every PE reports)
  torchrun_env.py --nproc 3 --expect left --victim 1 -- prog return 1
      like dead, but the victim ends without gshmem_finalize and exits 0
  --match REGEX (repeatable): must occur in the output (of the processes other than the victim, if any)
  --reject REGEX (repeatable): must not occur in the output of any process
  --count K:REGEX (repeatable): must occur at least K times in the output of all processes
Exit status 0 when every expectation holds, 1 otherwise (each failed expectation is printed).
"""
import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STRIP_PREFIXES = ("GSHMEM_RANK", "GSHMEM_WORLD_SIZE", "GSHMEM_LOCAL_", "GSHMEM_LAUNCHER_", "OMPI_", "PMIX_",
                  "PMI_", "SLURM_")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nproc", type=int, required=True)
    ap.add_argument("--expect", choices=["ok", "dead", "left", "hang", "fail"], default="ok")
    ap.add_argument("--victim", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=30.0)
    ap.add_argument("--timeout", type=float, default=110.0)
    ap.add_argument("--match", action="append", default=[])
    ap.add_argument("--count", action="append", default=[])
    ap.add_argument("--reject", action="append", default=[])
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no program given")

    port = free_port()
    base = {k: v for k, v in os.environ.items() if not k.startswith(STRIP_PREFIXES)}
    base.update(WORLD_SIZE=str(a.nproc), LOCAL_WORLD_SIZE=str(a.nproc), GROUP_RANK="0", ROLE_RANK="0",
                MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    print(f"torchrun_env: {a.nproc} processes, MASTER_ADDR=127.0.0.1 MASTER_PORT={port}: {' '.join(cmd)}",
          flush=True)
    t0 = time.monotonic()
    procs, outs, ends = [], [], {}
    lock = threading.Lock()

    def pump(rank, stream, buf):
        for line in iter(stream.readline, b""):
            text = line.decode(errors="replace")
            buf.append(text)
            with lock:
                sys.stdout.write(f"[rank {rank}] {text}")
                sys.stdout.flush()

    threads = []
    for r in range(a.nproc):
        env = dict(base, RANK=str(r), LOCAL_RANK=str(r))
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        procs.append(p)
        outs.append([])
        th = threading.Thread(target=pump, args=(r, p.stdout, outs[r]), daemon=True)
        th.start()
        threads.append(th)

    # wait for all, recording when each ended
    while len(ends) < a.nproc and time.monotonic() - t0 < a.timeout:
        for r, p in enumerate(procs):
            if r not in ends and p.poll() is not None:
                ends[r] = time.monotonic() - t0
        time.sleep(0.02)
    failures = []
    for r, p in enumerate(procs):
        if r not in ends:
            failures.append(f"rank {r} (pid {p.pid}) still running after {a.timeout:.0f} s: killed")
            p.kill()
            p.wait()
            ends[r] = float("inf")
    for th in threads:
        th.join(timeout=5)

    def describe(rc):
        return f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}"

    for r, p in enumerate(procs):
        end = ends[r]
        print(f"torchrun_env: rank {r}: {describe(p.returncode)} after {end:.2f} s", flush=True)

    if a.expect == "ok":
        for r, p in enumerate(procs):
            if p.returncode != 0:
                failures.append(f"rank {r}: {describe(p.returncode)}, want exit 0")
    elif a.expect == "fail":
        for r, p in enumerate(procs):
            if p.returncode == 0:
                failures.append(f"rank {r} exited 0, want an error")
            if ends[r] > a.deadline:
                failures.append(f"rank {r} ended after {ends[r]:.2f} s; want within {a.deadline:.0f} s")
    else:
        v = a.victim if 0 <= a.victim < a.nproc else a.nproc - 1
        if a.expect == "left" and procs[v].returncode != 0:
            failures.append(f"victim rank {v}: {describe(procs[v].returncode)}, want exit 0 (it ends without finalize)")
        elif a.expect != "left" and procs[v].returncode == 0:
            failures.append(f"victim rank {v} exited 0")
        ref = ends[v] if a.expect in ("dead", "left") else 0.0
        what = f"after the victim ended (at {ref:.2f} s)" if a.expect in ("dead", "left") else "after the start"
        for r, p in enumerate(procs):
            if r == v:
                continue
            if p.returncode == 0:
                failures.append(f"survivor rank {r} exited 0 (did not notice that rank {v} was gone)")
            took = ends[r] - ref
            if took > a.deadline:
                failures.append(f"survivor rank {r} ended {took:.2f} s {what}; want within {a.deadline:.0f} s")
        text = "".join("".join(outs[r]) for r in range(a.nproc) if r != v)
        for m in a.match:
            if not re.search(m, text, re.MULTILINE):
                failures.append(f"no output of the survivors matches /{m}/")
    text = "".join("".join(o) for o in outs)
    if a.expect in ("ok", "fail"):
        for m in a.match:
            if not re.search(m, text, re.MULTILINE):
                failures.append(f"no output matches /{m}/")
    for m in a.reject:
        if re.search(m, text, re.MULTILINE):
            failures.append(f"the output matches /{m}/, which it must not")
    for c in a.count:
        k, _, m = c.partition(":")
        got = len(re.findall(m, text, re.MULTILINE))
        if got < int(k):
            failures.append(f"/{m}/ occurs {got} times in the output, want at least {k}")
    for f in failures:
        print(f"torchrun_env: FAIL: {f}", flush=True)
    if not failures:
        print(f"torchrun_env: PASS ({a.expect})", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
