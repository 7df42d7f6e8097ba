"""gshmem.bindings, nvshmem4py's raw host bindings (`nvshmem.bindings`), as programs call them next to
nvshmem.core: bindings_worker.py (the patterns and where they were seen are listed there).

CPU PEs (always; CI): every host call at 2, 3 and 4 PEs under gshmemrun (init by gshmem.core), the stream calls
refused with NVSHMEMError, and a job started by the bindings alone (unique id, InitAttr, hostlib_init_attr) in plain
processes. GPU PEs (where a GPU is visible): the stream calls with torch tensors on torch's stream.
"""
import random
import subprocess
import sys
import tempfile

import pytest

from test_core import GPU_PES, HERE, env, gshmemrun, have, needs_gpu, run

WORKER = HERE / "bindings_worker.py"


def check(out, rc, seed, n):
    assert rc == 0, f"seed {seed}:\n{out}"
    for pe in range(n):
        assert f"PASS pe {pe}/{n}" in out, f"seed {seed}:\n{out}"


@pytest.mark.parametrize("n", [2, 3, 4])
def test_cpu_pes(n):
    seed = random.randrange(1 << 30)
    r = run([gshmemrun(), "-n", str(n), "--", sys.executable, str(WORKER)], env(seed))
    check(r.stdout + r.stderr, r.returncode, seed, n)


def plain_processes(args, n, seed, cwd=None, timeout=120):
    """n plain processes of `python <args>` (GSHMEM_TEST_RANK / _NRANKS and a shared GSHMEM_TEST_COMM_DIR, CPU PEs);
    returns (joined output, the worst exit status)."""
    build = HERE.parents[1] / "build"
    with tempfile.TemporaryDirectory(prefix="plain-comm-", dir=build if build.is_dir() else None) as folder:
        procs = []
        for rank in range(n):
            e = env(seed)
            e.update(GSHMEM_TEST_RANK=str(rank), GSHMEM_TEST_NRANKS=str(n), GSHMEM_TEST_COMM_DIR=folder)
            procs.append(subprocess.Popen([sys.executable, *args], env=e, cwd=cwd, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
        outs = []
        try:
            for p in procs:
                outs.append(p.communicate(timeout=timeout)[0])
        finally:
            for p in procs:
                p.kill()
                p.wait()
    return "".join(outs), max(abs(p.returncode) for p in procs)


def test_start_by_bindings():
    """get_uniqueid on rank 0, its bytes broadcast, set_attr_uniqueid_args + hostlib_init_attr on an InitAttr never
    initialised, nested, then gshmem.core and the bindings together, hostlib_finalize twice; 2 plain processes."""
    seed = random.randrange(1 << 30)
    check(*plain_processes([str(WORKER), "uid"], 2, seed), seed, 2)


@needs_gpu
def test_gpu_pes():
    if not have("torch"):
        pytest.skip("torch is not installed")
    seed = random.randrange(1 << 30)
    r = run([gshmemrun(), "-n", str(GPU_PES), "--", sys.executable, str(WORKER)], env(seed, "torch", "gpu"))
    check(r.stdout + r.stderr, r.returncode, seed, GPU_PES)
