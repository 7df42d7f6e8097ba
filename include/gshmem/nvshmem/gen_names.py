#!/usr/bin/env python3
"""Generates nvshmem_names.h: the NVSHMEM name of every gshmem public name, as a #define.

gshmem's public names are NVSHMEM's with gshmem_/gshmemx_/GSHMEM_/GSHMEMX_ in place of nvshmem_/nvshmemx_/
NVSHMEM_/NVSHMEMX_, same arguments and meaning. This script reads the gshmem headers (the C host API and every
device header), expands their X-macro type lists with the C preprocessor, collects the public names (functions,
types, constants), and writes one `#define nvshmem_x gshmem_x` per name, except:
  * HAND: names whose NVSHMEM form differs (signature or value); nvshmem_host.h maps them by hand;
  * EXTENSIONS: gshmem names NVSHMEM does not have (nothing to map).
A name in neither list is mapped by the prefix rule, so a new gshmem function gets its NVSHMEM name as soon as
this script runs again.

  python3 include/gshmem/nvshmem/gen_names.py            # rewrite nvshmem_names.h
  python3 include/gshmem/nvshmem/gen_names.py --check    # exit 1 if it is stale (CTest compat.names_current)

Needs a C preprocessor (`cpp`, or --cpp "g++ -E"); no CUDA headers: #include lines are dropped and the device
headers are read in both compilation passes (__CUDA_ARCH__ defined and not).
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.normpath(os.path.join(HERE, "..", ".."))  # include/
OUT = os.path.join(HERE, "nvshmem_names.h")

# gshmem name -> why nvshmem_host.h maps it by hand (the checker makes sure it does).
HAND = {
    "gshmem_init": "NVSHMEM's nvshmem_init returns void and ends the job on failure; gshmem_init returns a status",
    "gshmem_info_get_version": "NVSHMEM returns the OpenSHMEM version (NVSHMEM_MAJOR/MINOR_VERSION), "
                               "gshmem_info_get_version gshmem's own",
    "GSHMEM_SUCCESS": "NVSHMEM spells its status codes NVSHMEMX_SUCCESS / NVSHMEMX_ERROR_*",
    "GSHMEM_ERROR_INVALID_VALUE": "NVSHMEMX_ERROR_INVALID_VALUE",
    "GSHMEM_ERROR_OUT_OF_MEMORY": "NVSHMEMX_ERROR_OUT_OF_MEMORY",
    "GSHMEM_ERROR_NOT_SUPPORTED": "NVSHMEMX_ERROR_NOT_SUPPORTED",
    "GSHMEM_ERROR_MISMATCH": "NVSHMEMX_ERROR_SYMMETRY (PEs disagree on a collective call)",
    "GSHMEM_ERROR_INTERNAL": "NVSHMEMX_ERROR_INTERNAL",
    "GSHMEM_ERROR_GPU_NOT_SELECTED": "NVSHMEMX_ERROR_GPU_NOT_SELECTED",
    "GSHMEM_ERROR_COLLECTIVE_LAUNCH_FAILED": "NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED",
    "GSHMEM_VENDOR_STRING": "NVSHMEM_VENDOR_STRING is what nvshmem_info_get_name returns: \"gshmem <version>\"",
    "GSHMEM_MAX_NAME_LEN": "NVSHMEM_MAX_NAME_LEN",
    "gshmem_init_thread": "NVSHMEM's nvshmem_init_thread ends the job when initialisation fails (as nvshmem_init "
                          "does); gshmem_init_thread returns the status",
    "GSHMEMX_TEAM_SAME_GPU": "NVSHMEMI_TEAM_SAME_GPU (NVSHMEM's internal prefix)",
    "GSHMEMX_TEAM_GPU_LEADERS": "NVSHMEMI_TEAM_GPU_LEADERS (NVSHMEM's internal prefix)",
}

# The NVSHMEM names nvshmem_host.h (or non_abi/nvshmem_version.h, which it includes) must define for the HAND
# entries (checked by --check).
HAND_NVSHMEM = [
    "nvshmem_init", "nvshmem_info_get_version", "NVSHMEMX_SUCCESS",
    "NVSHMEMX_ERROR_INVALID_VALUE", "NVSHMEMX_ERROR_OUT_OF_MEMORY", "NVSHMEMX_ERROR_NOT_SUPPORTED",
    "NVSHMEMX_ERROR_SYMMETRY", "NVSHMEMX_ERROR_INTERNAL", "NVSHMEMX_ERROR_GPU_NOT_SELECTED",
    "NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED", "NVSHMEM_VENDOR_STRING", "NVSHMEM_MAX_NAME_LEN",
    "NVSHMEM_MAJOR_VERSION", "NVSHMEM_MINOR_VERSION", "NVSHMEM_VENDOR_MAJOR_VERSION",
    "NVSHMEM_VENDOR_MINOR_VERSION", "NVSHMEM_VENDOR_PATCH_VERSION", "nvshmemx_vendor_get_version_info",
    "nvshmemx_status", "nvshmem_init_thread", "nvshmemx_init_init_attr_ver_only", "NVSHMEMI_TEAM_SAME_GPU",
    "NVSHMEMI_TEAM_GPU_LEADERS",
]

# gshmem names with no NVSHMEM counterpart of that name and meaning: not mapped. A regular expression per entry.
EXTENSIONS = [
    (r"gshmemx_last_error|gshmemx_status_string", "gshmem's error text (NVSHMEM has none)"),
    (r"gshmemx_query_device", "gshmem extension: which GPU (or CPU PE) this PE runs on"),
    (r"gshmemx_heap_usage(_t)?", "gshmem extension: symmetric heap statistics"),
    (r"gshmemx_moe_\w+|GSHMEMX_MOE_\w+", "gshmem extension: MoE dispatch / combine (pplx-kernels' AllToAll)"),
    (r"gshmemx_device_handle|gshmem_device_\w+|GSHMEM_DEVICE_\w+", "gshmem's native device handle"),
    (r"GSHMEM_ERROR_(NOT_INITIALIZED|PEER_FAILED|TIMEOUT|SYSTEM)",
     "gshmem status codes NVSHMEM has no name for (non-zero like every NVSHMEMX_ERROR_*)"),
    (r"GSHMEM_VERSION_\w+", "gshmem's own version (NVSHMEM_VENDOR_* follow the NVSHMEM API level instead)"),
    (r"GSHMEMX_UNIQUEID_BYTES|GSHMEMX_(UNIQUEID|UNIQUEID_ARGS|INIT_ARGS|INIT_ATTR)_VERSION|GSHMEM_TEAM_CONFIG_VERSION",
     "layout versions of gshmem's structs (the same numbers as NVSHMEM's, which has no names for them: its users "
     "use the *_INITIALIZER macros and nvshmemx_init_init_attr_ver_only)"),
    (r"GSHMEM_HD", "gshmem's host-and-device function marker (gshmem/team_value.h)"),
    (r"gshmem_stream_t", "gshmem's name for cudaStream_t (NVSHMEM uses cudaStream_t itself)"),
    (r"gshmem_status|gshmem_init_status|gshmemx_init_flags|gshmem_cmp|gshmem_signal_op|gshmem_thread_level",
     "enum tags; their enumerators are mapped"),
]
EXTENSION_RE = re.compile(r"^(?:%s)$" % "|".join("(?:%s)" % p for p, _ in EXTENSIONS))


def header_files():
    files = [os.path.join(INCLUDE, "gshmem", "version.h.in"), os.path.join(INCLUDE, "gshmem", "gshmem.h"),
             os.path.join(INCLUDE, "gshmem", "float16_host.h")]  # the half / bfloat16 type list free.cuh expands
    dev = os.path.join(INCLUDE, "gshmem", "device")
    more = []
    for root, _, names in os.walk(dev):
        for n in names:
            if n.endswith((".h", ".cuh", ".hpp")):
                more.append(os.path.join(root, n))
    # state.h and common first (other device headers use what they define), the free functions last.
    def key(p):
        base = os.path.basename(p)
        return (0 if base == "state.h" else 1 if base == "common.cuh" else 3 if base == "free.cuh" else 2, p)
    files += sorted(more, key=key)
    files.append(os.path.join(INCLUDE, "gshmem", "device.cuh"))
    return files


def read_sources():
    text = []
    for f in header_files():
        with open(f, encoding="utf-8") as fh:
            src = fh.read()
        # @VAR@ placeholders of version.h.in; #include and #error lines would need headers we do not read.
        src = re.sub(r"@\w+@", "0", src)
        src = re.sub(r"(?m)^\s*#\s*(include|error|pragma\s+once)\b.*$", "", src)
        text.append("/* %s */\n%s\n" % (os.path.relpath(f, INCLUDE), src))
    return "".join(text)


def preprocess(cpp, src, device_pass):
    cmd = cpp.split() + ["-P", "-D__CUDACC__", "-x", "c++", "-"]
    if device_pass:
        cmd.insert(1, "-D__CUDA_ARCH__=900")
    r = subprocess.run(cmd, input=src, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("gen_names.py: the preprocessor failed (%s):\n%s" % (" ".join(cmd), r.stderr))
    return r.stdout


def collect(cpp):
    raw = read_sources()
    names = set()
    # object-like macros (constants) straight from the source
    for m in re.finditer(r"(?m)^\s*#\s*define\s+(GSHMEMX?_[A-Z0-9_]+)(?!\()\b", raw):
        n = m.group(1)
        if n.endswith(("_H", "_CUH", "_HPP")) or n == "GSHMEM_API":
            continue
        names.add(n)
    for device_pass in (False, True):
        out = preprocess(cpp, raw, device_pass)
        out = re.sub(r'"(?:\\.|[^"\\])*"', '""', out)  # string literals (messages name calls)
        out = re.sub(r"'(?:\\.|[^'\\])*'", "''", out)
        names.update(re.findall(r"\b(gshmemx?_[A-Za-z0-9_]+)\s*\(", out))          # functions
        names.update(re.findall(r"\b(gshmemx?_[A-Za-z0-9_]+_t)\b", out))           # types
        names.update(re.findall(r"\b(?:struct|enum)\s+(gshmemx?_[A-Za-z0-9_]+)", out))  # tags
        names.update(re.findall(r"\b(GSHMEMX?_[A-Z0-9_]+)\b", out))                # enumerators
    names = {n for n in names if not n.startswith(("gshmemi_", "gshmemxi_", "GSHMEMI_", "GSHMEMXI_"))}
    # function-like macros are not public names (type lists, declaration helpers)
    fnlike = set(re.findall(r"(?m)^\s*#\s*define\s+(\w+)\(", raw))
    return sorted(names - fnlike)


def nv_name(n):
    for a, b in (("gshmemx_", "nvshmemx_"), ("gshmem_", "nvshmem_"), ("GSHMEMX_", "NVSHMEMX_"),
                 ("GSHMEM_", "NVSHMEM_")):
        if n.startswith(a):
            return b + n[len(a):]
    raise ValueError(n)


def render(names):
    mapped = [n for n in names if n not in HAND and not EXTENSION_RE.match(n)]
    hand = [n for n in names if n in HAND]
    ext = [n for n in names if n not in HAND and EXTENSION_RE.match(n)]
    kinds = {"functions": [], "types": [], "constants": []}
    for n in mapped:
        if n[0].isupper():
            kinds["constants"].append(n)
        elif n.endswith("_t"):
            kinds["types"].append(n)
        else:
            kinds["functions"].append(n)
    lines = [
        "/* Generated by include/gshmem/nvshmem/gen_names.py from the gshmem headers. Do not edit: run",
        " *   python3 include/gshmem/nvshmem/gen_names.py",
        " * after changing a public gshmem header (CTest compat.names_current fails while this file is stale).",
        " *",
        " * NVSHMEM name -> gshmem name, by the prefix rule: %d names (%d functions, %d types, %d constants)."
        % (len(mapped), len(kinds["functions"]), len(kinds["types"]), len(kinds["constants"])),
        " * Mapped by hand in nvshmem_host.h (different signature or value): %s." % ", ".join(hand),
        " * Not mapped (gshmem extensions, no NVSHMEM name): %d names. */" % len(ext),
        "#ifndef GSHMEM_NVSHMEM_NAMES_H",
        "#define GSHMEM_NVSHMEM_NAMES_H",
    ]
    for kind in ("types", "constants", "functions"):
        lines.append("")
        lines.append("/* %s */" % kind)
        for n in kinds[kind]:
            lines.append("#define %s %s" % (nv_name(n), n))
    lines.append("")
    lines.append("#endif /* GSHMEM_NVSHMEM_NAMES_H */")
    return "\n".join(lines) + "\n", mapped


def check_hand():
    text = ""
    for f in ("nvshmem_host.h", "nvshmem.h", "nvshmemx.h", os.path.join("non_abi", "nvshmem_version.h")):
        p = os.path.join(HERE, f)
        if os.path.exists(p):
            with open(p, encoding="utf-8") as fh:
                text += fh.read()
    missing = [n for n in HAND_NVSHMEM
               if not re.search(r"(#\s*define\s+%s\b|\b%s\s*\(|\b%s\s*=|\b%s;)" % ((re.escape(n),) * 4), text)]
    return missing


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if nvshmem_names.h is stale; write nothing")
    ap.add_argument("--cpp", default=os.environ.get("CPP", "cpp"), help='C preprocessor command (default "cpp")')
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--list", action="store_true", help="print every gshmem public name and what it maps to")
    a = ap.parse_args()
    names = collect(a.cpp)
    text, mapped = render(names)
    if a.list:
        for n in names:
            how = nv_name(n) if n in mapped else ("hand: " + HAND[n]) if n in HAND else "extension"
            print("%-50s %s" % (n, how))
        return 0
    if not a.check:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        print("gen_names.py: wrote %s (%d NVSHMEM names mapped by the prefix rule)" % (a.out, len(mapped)))
        return 0
    rc = 0
    try:
        with open(a.out, encoding="utf-8") as fh:
            current = fh.read()
    except OSError:
        current = ""
    if current != text:
        have = set(re.findall(r"(?m)^#define (\S+) (\S+)$", current))
        want = set(re.findall(r"(?m)^#define (\S+) (\S+)$", text))
        lacking = sorted(g for _, g in want - have)
        extra = sorted(g for _, g in have - want)
        print("compat.names_current: %s is stale." % os.path.relpath(a.out, INCLUDE))
        if lacking:
            print("  gshmem public names without their NVSHMEM mapping (%d): %s" % (len(lacking), " ".join(lacking)))
        if extra:
            print("  mappings to gshmem names that no longer exist (%d): %s" % (len(extra), " ".join(extra)))
        print("  Fix: python3 include/gshmem/nvshmem/gen_names.py  (and add a name to HAND or EXTENSIONS in it "
              "if its NVSHMEM form differs or NVSHMEM has none)")
        rc = 1
    missing = check_hand()
    if missing:
        print("compat.names_current: nvshmem_host.h does not define these hand-mapped NVSHMEM names: %s"
              % " ".join(missing))
        rc = 1
    if rc == 0:
        print("compat.names_current: nvshmem_names.h is current (%d names mapped by the prefix rule, %d by hand)"
              % (len(mapped), len(HAND_NVSHMEM)))
    return rc


if __name__ == "__main__":
    sys.exit(main())
