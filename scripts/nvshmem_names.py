#!/usr/bin/env python3
"""Compares the NVSHMEM API names gshmem provides with NVIDIA NVSHMEM's, from NVSHMEM's headers *after
preprocessing*: most of NVSHMEM's typed names (nvshmem_int_put, nvshmemx_float_sum_reduce_block, ...) are stamped
out by macros and never appear literally in its headers.

  NVSHMEM_INCLUDE=/path/to/nvshmem/include python3 scripts/nvshmem_names.py --out DIR
  python3 scripts/nvshmem_names.py --nvshmem-include DIR --out DIR [--nvcc nvcc] [--arch sm_90]
  python3 scripts/nvshmem_names.py --host-pp H.ii --device-pp D.ii ...   (already preprocessed text)

NVSHMEM's headers are preprocessed twice with nvcc, as a CUDA source that includes <nvshmem.h> and <nvshmemx.h>:
host side with `nvcc -E -x cu`, device side with `nvcc -c -rdc=true --keep --keep-dir D` (D/*.cpp1.ii is the
device-side preprocessed text). NVSHMEM's public functions are the identifiers nvshmem_* / nvshmemx_* followed by
'(' in either text (nvshmemi_* are internal). gshmem's NVSHMEM names are the #defines of include/gshmem/nvshmem/
(the generated nvshmem_names.h and the hand-written ones) plus the enumerators nvshmem_host.h defines.

Writes to --out:
  names_missing.txt              NVSHMEM functions gshmem lacks, collectives excluded
  names_missing_collectives.txt  NVSHMEM collective functions gshmem lacks (reduce, reducescatter, broadcast,
                                 fcollect, collect, alltoall; a later issue)
  names_not_in_nvshmem.txt       names gshmem defines that NVSHMEM has nowhere (preprocessed text or raw headers)
  names_nvshmem_functions.txt    every NVSHMEM public function found
  names_ours.txt                 every NVSHMEM name gshmem defines
and prints a summary. Exit status 0, or 2 if gshmem defines a name NVSHMEM lacks that is not in KNOWN_EXTRAS
(--strict: also if a non-collective function is missing that is not in KNOWN_OMISSIONS).

Needs nvcc only when given --nvshmem-include; no GPU, no NVSHMEM library.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
COMPAT = os.path.join(ROOT, "include", "gshmem", "nvshmem")

COLLECTIVE = re.compile(r"(reduce|broadcast|fcollect|collect|alltoall)")

# NVSHMEM functions gshmem leaves out on purpose (docs/migration.md says why); --strict ignores these.
KNOWN_OMISSIONS = {
    "nvshmemx_put6_signal_warp": "NVSHMEM 3.4.5 typo for put16 (its size list has 6; copies nelems*6/8 = 0 bytes)",
    "nvshmemx_put6_signal_block": "NVSHMEM typo, see put6_signal_warp",
    "nvshmemx_put6_signal_nbi_warp": "NVSHMEM typo, see put6_signal_warp",
    "nvshmemx_put6_signal_nbi_block": "NVSHMEM typo, see put6_signal_warp",
}

# Names gshmem defines on purpose although NVSHMEM's headers lack them; listed, but not an error.
KNOWN_EXTRAS = {
    "nvshmemx_put16_signal_warp": "NVSHMEM documents putSIZE_signal_warp for SIZE 16; its 3.4.5 headers misspell it",
    "nvshmemx_put16_signal_block": "see put16_signal_warp",
    "nvshmemx_put16_signal_nbi_warp": "see put16_signal_warp",
    "nvshmemx_put16_signal_nbi_block": "see put16_signal_warp",
}

PROBE = "#include <nvshmem.h>\n#include <nvshmemx.h>\nint main() { return 0; }\n"


def run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("nvshmem_names.py: %s failed:\n%s" % (" ".join(cmd), (r.stderr or r.stdout)[-4000:]))
    return r.stdout


def preprocess(include, nvcc, arch):
    """(host text, device text) of NVSHMEM's headers."""
    work = tempfile.mkdtemp(prefix="nvshmem-names-")
    try:
        src = os.path.join(work, "probe.cu")
        with open(src, "w") as f:
            f.write(PROBE)
        host = run([nvcc, "-E", "-x", "cu", "-std=c++17", "-arch=" + arch, "-I" + include, src])
        keep = os.path.join(work, "keep")
        os.mkdir(keep)
        run([nvcc, "-c", "-rdc=true", "-std=c++17", "-arch=" + arch, "-I" + include, "--keep", "--keep-dir", keep,
             src, "-o", os.path.join(work, "probe.o")])
        device = ""
        for f in sorted(glob.glob(os.path.join(keep, "*.cpp1.ii"))):
            with open(f, errors="replace") as fh:
                device += fh.read()
        if not device:
            sys.exit("nvshmem_names.py: nvcc --keep left no *.cpp1.ii in %s" % keep)
        return host, device
    finally:
        shutil.rmtree(work, ignore_errors=True)


def strip_literals(text):
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)


def nvshmem_functions(*texts):
    names = set()
    for t in texts:
        names.update(re.findall(r"\b(nvshmemx?_[A-Za-z0-9_]+)\s*\(", strip_literals(t)))
    return names


def nvshmem_all_names(include, *texts):
    """Every nvshmem/NVSHMEM identifier in the preprocessed texts and the raw headers (macros live only there)."""
    pat = re.compile(r"\b(nvshmemx?_[A-Za-z0-9_]+|NVSHMEMX?_[A-Z0-9_]+)\b")
    names = set()
    for t in texts:
        names.update(pat.findall(t))
    if include:
        for root, _, files in os.walk(include):
            for n in files:
                with open(os.path.join(root, n), errors="replace") as fh:
                    names.update(pat.findall(fh.read()))
    return names


def ours():
    names = set()
    for f in sorted(glob.glob(os.path.join(COMPAT, "**", "*.h"), recursive=True)):
        with open(f) as fh:
            text = fh.read()
        names.update(re.findall(r"(?m)^\s*#\s*define\s+(nvshmemx?_[A-Za-z0-9_]+|NVSHMEMX?_[A-Z0-9_]+)", text))
        if os.path.basename(f) == "nvshmem_host.h":  # enumerators and typedefs written out there
            names.update(re.findall(r"\b(NVSHMEMX?_[A-Z0-9_]+)\s*=", text))
            names.update(re.findall(r"typedef\s+[^;]*\b(nvshmemx?_[A-Za-z0-9_]+)\s*;", text))
    return names


def write(path, items):
    with open(path, "w") as fh:
        for n in sorted(items):
            fh.write(n + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nvshmem-include", default=os.environ.get("NVSHMEM_INCLUDE"),
                    help="NVSHMEM's include directory (default: $NVSHMEM_INCLUDE)")
    ap.add_argument("--host-pp", help="NVSHMEM's headers already preprocessed host side (instead of running nvcc)")
    ap.add_argument("--device-pp", help="... and device side (a *.cpp1.ii)")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--out", default=".", help="directory for the name lists")
    ap.add_argument("--strict", action="store_true",
                    help="exit 2 also when a non-collective function is missing that is not a known omission")
    a = ap.parse_args()

    if a.host_pp and a.device_pp:
        with open(a.host_pp, errors="replace") as fh:
            host = fh.read()
        with open(a.device_pp, errors="replace") as fh:
            device = fh.read()
    elif a.nvshmem_include:
        if not os.path.isfile(os.path.join(a.nvshmem_include, "nvshmem.h")):
            sys.exit("nvshmem_names.py: %s has no nvshmem.h. Fix: point --nvshmem-include (or NVSHMEM_INCLUDE) at "
                     "NVSHMEM's include directory (pip nvidia-nvshmem-cu13: <site-packages>/nvidia/nvshmem/include)"
                     % a.nvshmem_include)
        host, device = preprocess(a.nvshmem_include, a.nvcc, a.arch)
    else:
        sys.exit("nvshmem_names.py: no NVSHMEM headers. Fix: set NVSHMEM_INCLUDE or pass --nvshmem-include DIR "
                 "(or --host-pp and --device-pp)")

    funcs = {n for n in nvshmem_functions(host, device) if not n.startswith(("nvshmemi_", "nvshmemxi_"))}
    everything = nvshmem_all_names(a.nvshmem_include, host, device)
    mine = ours()
    missing = funcs - mine
    missing_coll = {n for n in missing if COLLECTIVE.search(n)}
    missing_rest = missing - missing_coll
    not_in_nvshmem = mine - everything

    os.makedirs(a.out, exist_ok=True)
    write(os.path.join(a.out, "names_missing.txt"), missing_rest)
    write(os.path.join(a.out, "names_missing_collectives.txt"), missing_coll)
    write(os.path.join(a.out, "names_not_in_nvshmem.txt"), not_in_nvshmem)
    write(os.path.join(a.out, "names_nvshmem_functions.txt"), funcs)
    write(os.path.join(a.out, "names_ours.txt"), mine)
    unexpected = sorted(n for n in missing_rest if n not in KNOWN_OMISSIONS)
    print("names: NVSHMEM has %d public functions; gshmem defines %d NVSHMEM names" % (len(funcs), len(mine)))
    print("  missing, not collectives: %d (%d known omissions, %d others)" %
          (len(missing_rest), len(missing_rest) - len(unexpected), len(unexpected)))
    for n in sorted(missing_rest):
        print("    %-45s %s" % (n, KNOWN_OMISSIONS.get(n, "")))
    print("  missing collectives: %d (names_missing_collectives.txt)" % len(missing_coll))
    extra = sorted(n for n in not_in_nvshmem if n not in KNOWN_EXTRAS)
    print("  defined by gshmem but not in NVSHMEM: %d (%d on purpose, %d others)%s" %
          (len(not_in_nvshmem), len(not_in_nvshmem) - len(extra), len(extra),
           "".join("\n    %-45s %s" % (n, KNOWN_EXTRAS.get(n, "")) for n in sorted(not_in_nvshmem))))
    if extra or (a.strict and unexpected):
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
