"""gshmem.nvshmem_abi: libnvshmem_host.so.3 over gshmem comes with the package, `python -m gshmem.nvshmem_abi`
prints its folder or runs a command with it preloaded, and code that finds NVSHMEM through it by ctypes shares gshmem.core's runtime (CPU PEs at 2 and
3, started by gshmem.core.init or by the library's nvshmemx_hostlib_init_attr; nvshmem_abi_worker.py)."""
import random
import subprocess
import sys
from pathlib import Path

import pytest

from test_core import HERE, check, env, gshmemrun, run

WORKER = HERE / "nvshmem_abi_worker.py"


def test_lib_dir():
    r = subprocess.run([sys.executable, "-m", "gshmem.nvshmem_abi"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    folder = Path(r.stdout.strip())
    assert (folder / "libnvshmem_host.so.3").is_file(), r.stdout
    # it needs libgshmem.so.0 and finds it beside its folder (the package's, not another one)
    ldd = subprocess.run(["ldd", str(folder / "libnvshmem_host.so.3")], capture_output=True, text=True, timeout=60)
    line = next((x for x in ldd.stdout.splitlines() if "libgshmem.so" in x), "")
    found = Path(line.split("=>")[1].split("(")[0].strip()) if "=>" in line else None
    assert found is not None and found.resolve() == (folder.parent / "libgshmem.so.0").resolve(), ldd.stdout


CHECK_LOADED = """
import ctypes, os
ctypes.CDLL("libnvshmem_host.so.3", mode=os.RTLD_NOW | os.RTLD_NOLOAD)  # OSError where it is not loaded
f = ctypes.CDLL(None).nvshmemx_init_status
f.restype = ctypes.c_int
print("loaded; init status", f())
"""


def test_run_with_it_preloaded():
    """`python -m gshmem.nvshmem_abi COMMAND`: the command runs with the library already loaded (what
    cuda.pathfinder, and so nvshmem4py, takes); a plain run of the same check does not find it."""
    r = subprocess.run([sys.executable, "-m", "gshmem.nvshmem_abi", sys.executable, "-c", CHECK_LOADED],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "loaded; init status 0" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-c", CHECK_LOADED], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "OSError" in r.stderr, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "gshmem.nvshmem_abi", "no-such-program-here"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 127 and "cannot run 'no-such-program-here'" in r.stderr, r.stderr


@pytest.mark.parametrize("mode,n", [("core", 2), ("core", 3), ("abi", 2)])
def test_ctypes_beside_core(mode, n):
    seed = random.randrange(1 << 30)
    check(run([gshmemrun(), "-n", str(n), "--", sys.executable, str(WORKER), mode], env(seed)), seed, n)
