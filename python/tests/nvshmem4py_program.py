"""A program written for NVIDIA nvshmem4py only (every name is nvshmem4py's: `import nvshmem.core`,
`nvshmem.bindings`, `from nvshmem.core.nvshmem_types import *`), run unchanged on gshmem by test_as_nvshmem.py as
`python -m gshmem.as_nvshmem nvshmem4py_program.py`. Plain processes (GSHMEM_TEST_RANK / _NRANKS), the unique id
moved through GSHMEM_TEST_COMM_DIR as an MPI broadcast would; NumPy arrays on CPU PEs. Fresh data from
GSHMEM_TEST_SEED, poisoned outputs, exact comparisons; prints "PASS pe <i>/<n>"."""
import os
import sys
import time

import numpy as np

import nvshmem
import nvshmem.bindings
import nvshmem.core
from nvshmem.bindings import barrier_all, my_pe as h_my_pe
from nvshmem.core import Teams
from nvshmem.core.nvshmem_types import NvshmemInvalid

seed = int(os.environ["GSHMEM_TEST_SEED"])
rank, nranks = int(os.environ["GSHMEM_TEST_RANK"]), int(os.environ["GSHMEM_TEST_NRANKS"])
folder = os.environ["GSHMEM_TEST_COMM_DIR"]

# the unique id: rank 0 makes it, the others read its bytes (what comm.Bcast(uid._data.view(np.int8)) does)
uid = nvshmem.core.get_unique_id(empty=rank != 0)
path = os.path.join(folder, "uid")
if rank == 0:
    with open(path + ".tmp", "wb") as f:
        f.write(uid._data.view(np.int8).tobytes())
    os.rename(path + ".tmp", path)
else:
    deadline = time.monotonic() + 30
    while not os.path.exists(path):
        assert time.monotonic() < deadline, "no unique id from rank 0"
        time.sleep(0.002)
    uid._data.view(np.int8)[:] = np.frombuffer(open(path, "rb").read(), dtype=np.int8)
nvshmem.core.init(uid=uid, rank=rank, nranks=nranks, initializer_method="uid")
me, n = nvshmem.core.my_pe(), nvshmem.core.n_pes()
assert (me, n) == (rank, nranks) and h_my_pe() == me

count = int(np.random.default_rng([seed]).integers(1, 1000))
src = nvshmem.core.array((count,), dtype="int64")
dst = nvshmem.core.array((count,), dtype="int64")
src[:] = np.random.default_rng([seed, me]).integers(-2**40, 2**40, count)
dst[:] = -1
nvshmem.core.reduce(Teams.TEAM_WORLD, dst, src, "sum")
want = sum(np.random.default_rng([seed, p]).integers(-2**40, 2**40, count) for p in range(n))
assert np.array_equal(dst, want), "reduce"
# the raw bindings on the same PE: an atomic into the next PE's array, seen after a barrier
dst[:] = 0
barrier_all()
nvshmem.bindings.int64_atomic_add(dst.ctypes.data, me + 1, (me + 1) % n)
barrier_all()
assert dst[0] == (me - 1) % n + 1, dst[0]
try:
    nvshmem.core.array((4,), dtype="no such dtype")
    raise AssertionError("a bad dtype did not raise")
except (NvshmemInvalid, TypeError, ValueError):
    pass
nvshmem.core.free_array(src)
nvshmem.core.free_array(dst)
nvshmem.core.finalize()
print(f"PASS pe {me}/{n} ({nvshmem.__name__} as nvshmem, {sys.argv[1:]})", flush=True)
