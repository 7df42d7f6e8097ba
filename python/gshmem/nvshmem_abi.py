"""libnvshmem_host.so.3 over gshmem (src/nvshmem_abi), for the host side of code that finds NVSHMEM at run time:
nvshmem4py, NVIDIA Warp, Mojo, CUDA-hook libraries, ctypes (kernels built with NVIDIA's device library do not run on
gshmem). It comes with the package; it shares the libgshmem that gshmem.core
loads, so both see one runtime (one init, one heap).

    LD_LIBRARY_PATH=$(python -m gshmem.nvshmem_abi):$LD_LIBRARY_PATH program    # found by dlopen("libnvshmem_host.so.3")
    python -m gshmem.nvshmem_abi torchrun --nproc-per-node=2 prog.py    # preloaded (LD_PRELOAD): nvshmem4py finds it
    gshmem.nvshmem_abi.load()        # in a Python process: loaded now, visible to dlopen(..., RTLD_NOLOAD) and
                                     # dlsym(RTLD_DEFAULT, "nvshmem...") from then on (Warp, hook libraries)

NVIDIA's nvshmem4py runs over it when it is loaded before nvshmem4py looks NVSHMEM up (cuda.pathfinder takes a
library already loaded): LD_PRELOAD=$(python -m gshmem.nvshmem_abi)/libnvshmem_host.so.3, or load() before
`import nvshmem.core` in a process where torch has not loaded NVIDIA's libnvshmem_host.so.3 already.

Started by either side (gshmem.core.init, or the library's nvshmemx_hostlib_init_attr), the runtime is one; but
gshmem.core's own calls (arrays, tensors) need gshmem.core.init. It does not run code built against NVIDIA's
headers and device library (docs/migration.md).
"""
import ctypes
import os
import sys
from pathlib import Path

SONAME = "libnvshmem_host.so.3"
_DIR = Path(__file__).resolve().parent / "nvshmem_abi"


def lib_dir():
    """The folder holding libnvshmem_host.so.3 (put it on LD_LIBRARY_PATH)."""
    if not (_DIR / SONAME).is_file():
        raise FileNotFoundError(f"gshmem.nvshmem_abi: {_DIR} has no {SONAME}. Fix: install the package with pip "
                                "(pip install .) on Linux x86-64 or aarch64, which builds it")
    return str(_DIR)


def path():
    """The path of libnvshmem_host.so.3."""
    return str(Path(lib_dir()) / SONAME)


_loaded = None


def load():
    """Loads libnvshmem_host.so.3 with RTLD_GLOBAL (once) and returns its ctypes.CDLL: from then on
    dlopen("libnvshmem_host.so.3", RTLD_NOLOAD) finds it and its nvshmem* names resolve in the default scope."""
    global _loaded
    if _loaded is None:
        from gshmem import _gshmem  # noqa: F401  (libgshmem first, by the extension's path: the library reuses it)
        _loaded = ctypes.CDLL(path(), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    return _loaded


def _main(argv):
    """No arguments: print the folder. A command: run it with libnvshmem_host.so.3 preloaded (LD_PRELOAD), so that
    it and every process it starts (torchrun's workers) find gshmem as NVSHMEM."""
    if not argv:
        print(lib_dir())
        return 0
    if argv[0] in ("-h", "--help"):
        print("usage: python -m gshmem.nvshmem_abi                 print the folder of libnvshmem_host.so.3\n"
              "       python -m gshmem.nvshmem_abi COMMAND [ARG...]  run COMMAND with it preloaded, e.g.\n"
              "       python -m gshmem.nvshmem_abi torchrun --nproc-per-node=2 my_nvshmem4py_program.py")
        return 0
    env = dict(os.environ)
    env["LD_PRELOAD"] = path() + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as e:
        print(f"python -m gshmem.nvshmem_abi: cannot run {argv[0]!r}: {e.strerror}. Fix: name a program on PATH",
              file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
