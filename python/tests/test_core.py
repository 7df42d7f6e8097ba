"""gshmem.core on CPU PEs: launches 2 and 4 PEs (gshmemrun, and UID init with plain processes) running worker.py."""
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
WORKER = HERE / "worker.py"


def gshmemrun():
    """GSHMEMRUN, else the one the package installed on PATH, else the repository's build/bin."""
    for cand in (os.environ.get("GSHMEMRUN"), shutil.which("gshmemrun"),
                 str(HERE.parents[1] / "build" / "bin" / "gshmemrun")):
        if cand and os.access(cand, os.X_OK):
            return cand
    pytest.skip("no gshmemrun (pip install . puts it on PATH; or set GSHMEMRUN)")


def env(seed):
    e = dict(os.environ, GSHMEM_DEVICE="cpu", GSHMEM_TEST_SEED=str(seed))
    return e


def check(outputs, n):
    for pe in range(n):
        assert f"PASS pe {pe}/{n}" in outputs, outputs


@pytest.mark.parametrize("n", [2, 4])
def test_gshmemrun(n):
    seed = random.randrange(1 << 30)
    r = subprocess.run([gshmemrun(), "-n", str(n), "--", sys.executable, str(WORKER)], env=env(seed),
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"seed {seed}:\n{out}"
    check(out, n)


@pytest.mark.parametrize("n", [2])
def test_unique_id_init(n, tmp_path):
    seed = random.randrange(1 << 30)
    procs = []
    for rank in range(n):
        e = env(seed)
        e.update(GSHMEM_TEST_RANK=str(rank), GSHMEM_TEST_NRANKS=str(n), GSHMEM_TEST_UID_FILE=str(tmp_path / "uid"))
        procs.append(subprocess.Popen([sys.executable, str(WORKER), "uid"], env=e, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    outs = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        outs.append(out)
        assert p.returncode == 0, f"seed {seed}:\n{out}"
    check("".join(outs), n)


def test_example_exchange():
    """examples/python/exchange.py stays working (3 PEs)."""
    example = HERE.parents[1] / "examples" / "python" / "exchange.py"
    r = subprocess.run([gshmemrun(), "-n", "3", "--", sys.executable, str(example)], env=env(0),
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    for pe in range(3):
        assert f"PE {pe} of 3: peer write, allreduce and alltoall ok" in out, out
