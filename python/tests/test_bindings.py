"""gshmem.bindings, nvshmem4py's raw host bindings (`nvshmem.bindings`), as programs call them next to
nvshmem.core: bindings_worker.py (the patterns and where they were seen are listed there).

CPU PEs (always; CI): the host calls at 2, 3 and 4 PEs under gshmemrun (init by gshmem.core), the stream calls
refused with NVSHMEMError, and a job started by the bindings alone (unique id, InitAttr, hostlib_init_attr) in plain
processes and over an MPI communicator (mpirun, mpi4py). GPU PEs (where a GPU is visible): the stream calls with
torch tensors on torch's stream.
"""
import random
import shutil
import sys

import pytest

from test_core import GPU_PES, HERE, env, gshmemrun, have, needs_gpu, plain_processes, run

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


def test_start_by_bindings():
    """get_uniqueid on rank 0, its bytes broadcast, set_attr_uniqueid_args + hostlib_init_attr on an InitAttr never
    initialised, nested, then gshmem.core and the bindings together, hostlib_finalize twice; 2 plain processes."""
    seed = random.randrange(1 << 30)
    check(*plain_processes([str(WORKER), "uid"], 2, seed), seed, 2)


@pytest.mark.parametrize("n", [2, 3])
def test_start_by_bindings_mpi(n):
    """mpirun: set_attr_mpi_comm_args(MPI._addressof(comm), ...) + hostlib_init_attr(INIT_WITH_MPI_COMM) on a
    communicator with its ranks reversed (MPI_Comm_split), CPU PEs."""
    mpirun = shutil.which("mpirun")
    if not mpirun or not have("mpi4py"):
        pytest.skip("mpirun or mpi4py is not installed")
    seed = random.randrange(1 << 30)
    e = env(seed)
    exports = [a for v in ("GSHMEM_TEST_SEED", "GSHMEM_DEVICE", "PATH", "PYTHONPATH", "LD_LIBRARY_PATH") if v in e
               for a in ("-x", v)]
    r = run([mpirun, "--allow-run-as-root", "--oversubscribe", "-n", str(n), *exports, sys.executable, str(WORKER),
             "mpi"], e)
    check(r.stdout + r.stderr, r.returncode, seed, n)


@needs_gpu
def test_gpu_pes():
    if not have("torch"):
        pytest.skip("torch is not installed")
    seed = random.randrange(1 << 30)
    r = run([gshmemrun(), "-n", str(GPU_PES), "--", sys.executable, str(WORKER)], env(seed, "torch", "gpu"))
    check(r.stdout + r.stderr, r.returncode, seed, GPU_PES)
