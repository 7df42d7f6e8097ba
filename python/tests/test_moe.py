"""gshmem.moe.AllToAll (pplx-kernels' MoE dispatch / combine) end to end: launches PEs running moe_worker.py.

CPU PEs (CI): NumPy arrays at 2 PEs (dp_size 1 and 2) and 4 PEs (dp_size 2: two groups of two, and 1), every
scenario against the worker's reference (exact dispatch in order, bit-exact combine); the bad-input cases at 2 and
4 PEs; torch CPU tensors (bfloat16 included) where torch is installed. GPU PEs (where a GPU and torch are present;
skipped elsewhere): the same scenarios on torch CUDA tensors through the stream forms (current stream and a
stream= argument, bound_m as a uint32 CUDA tensor), and the Python-side refusals on GPU PEs.
"""
import random
import sys

import pytest

from test_core import GPU_PES, HERE, check, env, gshmemrun, have, needs_gpu, run

WORKER = HERE / "moe_worker.py"


def moe_env(seed, lib, dp, device="cpu"):
    return dict(env(seed, lib, device), GSHMEM_TEST_DP=str(dp))


@pytest.mark.parametrize("n,dp", [(2, 1), (2, 2), (4, 2), (4, 1)])
def test_moe_numpy(n, dp):
    seed = random.randrange(1 << 30)
    check(run([gshmemrun(), "-n", str(n), "--", sys.executable, str(WORKER)], moe_env(seed, "numpy", dp),
              timeout=120), seed, n)


@pytest.mark.parametrize("n,dp", [(2, 1), (4, 2)])
def test_moe_bad_input(n, dp):
    seed = random.randrange(1 << 30)
    check(run([gshmemrun(), "-n", str(n), "--", sys.executable, str(WORKER), "bad"], moe_env(seed, "numpy", dp),
              timeout=120), seed, n)


@pytest.mark.skipif(not have("torch"), reason="torch is not installed")
@pytest.mark.parametrize("mode", ["cases", "bad"])
def test_moe_torch_cpu(mode):
    seed = random.randrange(1 << 30)
    check(run([gshmemrun(), "-n", "4", "--", sys.executable, str(WORKER), mode], moe_env(seed, "torch", 2),
              timeout=180), seed, 4)


@needs_gpu
@pytest.mark.skipif(not have("torch"), reason="torch is not installed")
@pytest.mark.parametrize("dp", [1, 2])
def test_moe_gpu(dp):
    seed = random.randrange(1 << 30)
    n = GPU_PES
    if n % dp:
        pytest.skip(f"dp_size {dp} does not divide {n} GPU PEs")
    check(run([gshmemrun(), "-n", str(n), "--", sys.executable, str(WORKER), "cases"], moe_env(seed, "cuda", dp, "gpu"),
              timeout=300), seed, n)


@needs_gpu
@pytest.mark.skipif(not have("torch"), reason="torch is not installed")
def test_moe_gpu_bad_input():
    seed = random.randrange(1 << 30)
    n = GPU_PES
    check(run([gshmemrun(), "-n", str(n), "--", sys.executable, str(WORKER), "gpu_bad"],
              moe_env(seed, "cuda", 1, "gpu"), timeout=120), seed, n)
