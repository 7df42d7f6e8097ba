#!/usr/bin/env python3
"""Compile CUDA sources with `nvcc -Xptxas -v` and fail if any kernel needs more registers per thread than a
1024-thread block allows (65536 registers per SM / 1024 = 64), or spills registers to local memory. A kernel over
64 compiles but cannot launch with 1024 threads (cudaLaunch reports "too many resources requested for launch" on
the GPU only); a kernel bounded to 1024 threads (__launch_bounds__) that spills got there by slow local memory.

A few spilled bytes are allowed (--spill-allow, default 32 = 8 registers) and reported: warp and block copies of
more than one element per thread are a call (detail::copy_general_call), and a kernel with many live values keeps
a few of them on the stack across it (12-24 bytes in the bench's and this test's all-to-all kernels, stored at
entry or once per outer round). A register blow-up in the inlined API (the reverted non-coherent-load copy needed
72-80 registers) spills more than that.

usage: regs_check.py --nvcc NVCC --arch sm_90 [--limit 64] [--spill-allow 32] [--flag=-I...]... SOURCE...
"""
import argparse
import re
import subprocess
import sys
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--limit", type=int, default=64)
    ap.add_argument("--spill-allow", type=int, default=32, help="spill store bytes per function still accepted")
    ap.add_argument("--flag", action="append", default=[], help="extra nvcc flag (repeat)")
    ap.add_argument("sources", nargs="+")
    a = ap.parse_args()
    bad = 0
    checked = 0
    for src in a.sources:
        with tempfile.NamedTemporaryFile(suffix=".o") as obj:
            cmd = [a.nvcc, "-c", "-O3", "-std=c++17", f"-arch={a.arch}", "-Xptxas", "-v", *a.flag, "-o", obj.name, src]
            p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"regs_check: compiling {src} failed:\n{p.stderr}", file=sys.stderr)
            return 1
        entry = None
        func = None  # the function the next spill line belongs to (a kernel or a noinline device function)
        for line in p.stderr.splitlines():
            m = re.search(r"Compiling entry function '([^']+)'", line)
            if m:
                entry = func = m.group(1)
                continue
            m = re.search(r"Function properties for (\S+)", line)
            if m:
                func = m.group(1)
                continue
            m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
            if m and func and (int(m.group(1)) or int(m.group(2))):
                stored, loaded = int(m.group(1)), int(m.group(2))
                if stored <= a.spill_allow and loaded <= a.spill_allow:
                    print(f"regs_check: note: {src}: function {func} spills {stored} bytes stored, {loaded} loaded "
                          f"(within --spill-allow {a.spill_allow}: values kept across the out-of-line copy call)")
                else:
                    bad += 1
                    print(f"regs_check: {src}: function {func} spills ({stored} bytes stored, {loaded} loaded, "
                          f"more than {a.spill_allow}) to fit {a.limit} registers. Fix: reduce what the device API "
                          f"keeps live in the caller", file=sys.stderr)
            m = re.search(r"Used (\d+) registers", line)
            if m and entry:
                regs = int(m.group(1))
                checked += 1
                if regs > a.limit:
                    bad += 1
                    print(f"regs_check: {src}: kernel {entry} uses {regs} registers per thread (limit {a.limit}): "
                          f"it cannot launch with 1024 threads. Fix: reduce what the device API keeps live in the "
                          f"caller (it is inlined), e.g. no out-of-line calls or asm memory clobbers in copy loops",
                          file=sys.stderr)
                entry = None
    if checked == 0:
        print("regs_check: no kernel found in the ptxas output (did -Xptxas -v print nothing?)", file=sys.stderr)
        return 1
    print(f"regs_check: {checked} kernels, {bad} findings (over {a.limit} registers or spilling)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
