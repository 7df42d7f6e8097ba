#!/usr/bin/env python3
"""Runs a command that must FAIL in a given way, for the bad-input and dead-peer tests.

  expect_fail.py [--match REGEX]... [--count K:REGEX]... [--exactly K:REGEX]... [--reject REGEX]...
                 [--within SECONDS] [--timeout SECONDS] -- cmd args...

Passes (exit 0) only if the command exits non-zero (not 77; with --ok: exits 0), within --within seconds if given, every --match
regex occurs in its output (stdout and stderr together), every --count regex occurs at least K times, every
--exactly regex exactly K times, and no --reject regex occurs.
The command runs in its own process group, which is killed if it outlives --timeout.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--match", action="append", default=[])
    ap.add_argument("--count", action="append", default=[])
    ap.add_argument("--exactly", action="append", default=[])
    ap.add_argument("--reject", action="append", default=[])
    ap.add_argument("--within", type=float, default=None)
    ap.add_argument("--timeout", type=float, default=100.0)
    ap.add_argument("--ok", action="store_true", help="the command must succeed (exit 0) instead; the output checks hold")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command given")
    print("expect_fail: running: " + " ".join(cmd), flush=True)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    failures = []
    try:
        out, _ = p.communicate(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        failures.append(f"still running after {a.timeout:.0f} s (killed): a hang instead of an error")
    took = time.monotonic() - t0
    text = out.decode(errors="replace")
    sys.stdout.write(text)
    print(f"expect_fail: exit status {p.returncode} after {took:.2f} s", flush=True)
    if a.ok and p.returncode != 0:
        failures.append(f"the command exited {p.returncode}, want 0")
    if not a.ok and p.returncode == 0:
        failures.append("the command exited 0: the bad input was not reported as an error")
    if p.returncode == 77:
        failures.append("the command exited 77 (skip), not an error")
    if a.within is not None and took > a.within:
        failures.append(f"took {took:.2f} s, want at most {a.within:.0f} s")
    for m in a.match:
        if not re.search(m, text, re.MULTILINE):
            failures.append(f"no output matches /{m}/")
    for c in a.count:
        k, _, m = c.partition(":")
        got = len(re.findall(m, text, re.MULTILINE))
        if got < int(k):
            failures.append(f"/{m}/ occurs {got} times, want at least {k}")
    for c in a.exactly:
        k, _, m = c.partition(":")
        got = len(re.findall(m, text, re.MULTILINE))
        if got != int(k):
            failures.append(f"/{m}/ occurs {got} times, want exactly {k}")
    for m in a.reject:
        if re.search(m, text, re.MULTILINE):
            failures.append(f"the output matches /{m}/, which it must not")
    for f in failures:
        print(f"expect_fail: FAIL: {f}", flush=True)
    if not failures:
        print("expect_fail: PASS", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
