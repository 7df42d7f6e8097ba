"""Programs we did not write: nvshmem4py's calling patterns, as public programs use `nvshmem.core` (NVIDIA/nvshmem's
nvshmem4py tests, examples and perftests; pplx-kernels; triton-distributed, cutlass and other users), run on
gshmem.core by nvshmem4py_worker.py. The list of patterns and their sources is in python/README.md.

CPU PEs (always; CI): NumPy arrays at 2 and 3 PEs under gshmemrun; the unique-id and init patterns with plain
processes (MPI-style broadcasts through files); torch CPU tensors where torch is installed. GPU PEs (where a GPU is
visible): torch tensors and CuPy arrays, with the streams programs pass.
"""
import random
import sys

import pytest

from test_core import GPU_PES, HERE, env, gshmemrun, have, needs_gpu, plain_processes, run

WORKER = HERE / "nvshmem4py_worker.py"


def check(r, seed, n):
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"seed {seed}:\n{out}"
    for pe in range(n):
        assert f"PASS pe {pe}/{n}" in out, f"seed {seed}:\n{out}"


def launch(n, lib, device, *case):
    """n PEs of the worker under gshmemrun; case: ("case", <name>) runs one group of checks (CASES)."""
    seed = random.randrange(1 << 30)
    r = run([gshmemrun(), "-n", str(n), "--", sys.executable, str(WORKER), *case], env(seed, lib, device))
    check(r, seed, n)


@pytest.mark.parametrize("n", [2, 3])
def test_numpy_patterns(n):
    launch(n, "numpy", "cpu")


def test_init_patterns():
    """get_unique_id(empty=True) + comm.Bcast(uid._data.view(np.int8)), the other ways programs move the id, nested
    init / finalize, "emulated_mpi" and "mpi" over a communicator; 2 plain processes."""
    seed = random.randrange(1 << 30)
    out, rc = plain_processes([str(WORKER), "init"], 2, seed)
    assert rc == 0, f"seed {seed}:\n{out}"
    for pe in range(2):
        assert f"PASS pe {pe}/2" in out, out


@pytest.mark.skipif(not have("torch"), reason="torch is not installed")
def test_torch_cpu_patterns():
    launch(2, "torch", "cpu")


@needs_gpu
@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_gpu_patterns(lib):
    if not have(lib):
        pytest.skip(f"{lib} is not installed")
    launch(GPU_PES, lib, "gpu")


# Collectives, barrier and sync on split teams (strided, 2D; an odd PE count gives 2D teams of unequal sizes), team
# arguments that are no team (None from a split, a destroyed team), the negative splits with new_team_name.
@pytest.mark.parametrize("n", [3, 4])
def test_split_team_collectives(n):
    launch(n, "numpy", "cpu", "case", "split-team-collectives")


@pytest.mark.skipif(not have("torch"), reason="torch is not installed")
def test_split_team_collectives_torch_cpu():
    """With torch's dtypes (bfloat16 too, as collective_test.py's torch list has it), at 3 PEs (unequal 2D teams)."""
    launch(3, "torch", "cpu", "case", "split-team-collectives")


# Parts of allocations (Buffer.from_handle prefixes, slices, rows), double free, a torch DTensor helper's use.
@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_views_and_lifetime(lib):
    if not have(lib):
        pytest.skip(f"{lib} is not installed")
    launch(2, lib, "cpu", "case", "views-and-lifetime")


@needs_gpu
@pytest.mark.parametrize("case", ["split-team-collectives", "views-and-lifetime"])
@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_gpu_cases(lib, case):
    if not have(lib):
        pytest.skip(f"{lib} is not installed")
    launch(GPU_PES, lib, "gpu", "case", case)


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_single_pe_uid_init(lib):
    """One plain process: init from its own unique id with nranks=1 (pplx-kernels' 1-GPU test), CPU PEs."""
    if not have(lib):
        pytest.skip(f"{lib} is not installed")
    seed = random.randrange(1 << 30)
    check(run([sys.executable, str(WORKER), "single"], env(seed, lib, "cpu"), timeout=120), seed, 1)
