"""One PE of test_nvshmem_abi.py: code that finds NVSHMEM at run time (ctypes, as Warp, FlashInfer, hook libraries
and binding generators do) after gshmem.nvshmem_abi.load(), beside gshmem.core in the same process: one runtime.

Argument "core": started by gshmem.core.init(), and the library's calls also reach gshmem.core's arrays; "abi":
started by the library's nvshmemx_hostlib_init_attr (flags 0, a struct of NVSHMEM's 144 bytes with its version
stamped), and only the library's memory is used (gshmem.core's own calls need gshmem.core.init). Fresh data from GSHMEM_TEST_SEED; poisoned targets; exact
comparison; prints "PASS pe <me>/<n>".
"""
import ctypes
import os
import sys

import numpy as np

import gshmem.core as nv
import gshmem.nvshmem_abi as abi

SEED = int(os.environ["GSHMEM_TEST_SEED"])
MODE = sys.argv[1]
N = 64


def values(pe):
    return np.random.default_rng([SEED, pe]).integers(-(1 << 31), 1 << 31, size=N, dtype=np.int64).astype(np.int32)


def fn(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


lib = abi.load()
assert abi.load() is lib
# Warp's "is NVSHMEM loaded?" (raises OSError when it is not) and the default scope's names (hook libraries)
ctypes.CDLL(abi.SONAME, mode=os.RTLD_NOW | os.RTLD_NOLOAD)
default = ctypes.CDLL(None)
status = fn(default, "nvshmemx_init_status", ctypes.c_int)
assert status() == 0, status()
if MODE == "core":
    nv.init()
else:
    attr = (ctypes.c_int32 * 36)()  # nvshmemx_init_attr_t: 144 bytes, its version first
    attr[0] = (1 << 16) + 144
    rc = fn(lib, "nvshmemx_hostlib_init_attr", ctypes.c_int, ctypes.c_uint, ctypes.c_void_p)(0, attr)
    assert rc == 0, rc
assert status() == 2, status()
me, n = fn(default, "nvshmem_my_pe", ctypes.c_int)(), fn(lib, "nvshmem_n_pes", ctypes.c_int)()
assert (me, n) == (nv.my_pe(), nv.n_pes()), (me, n, nv.my_pe(), nv.n_pes())
right, left = (me + 1) % n, (me + n - 1) % n

# memory from the library, written with nvshmem_int_p to the right, read here as NumPy
malloc = fn(lib, "nvshmem_malloc", ctypes.c_void_p, ctypes.c_size_t)
p = malloc(N * 4)
assert p, "nvshmem_malloc gave NULL"
assert fn(lib, "nvshmem_ptr", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)(p, me) == p
mine = np.ctypeslib.as_array((ctypes.c_int32 * N).from_address(p))
mine[:] = -7
barrier_all = fn(lib, "nvshmem_barrier_all", None)
barrier_all()
int_p = fn(lib, "nvshmem_int_p", None, ctypes.c_void_p, ctypes.c_int, ctypes.c_int)
for i, v in enumerate(values(me)):
    int_p(p + 4 * i, int(v), right)
barrier_all()
assert np.array_equal(mine, values(left)), (mine, values(left))

# an array (gshmem.core's, or the library's memory), read from the left PE with the library's nvshmem_getmem, and
# summed over the PEs by its nvshmem_int_sum_reduce
def symmetric():
    if MODE == "core":
        a = nv.array((N,), dtype="int32")
        return a, a.ctypes.data
    q = malloc(N * 4)
    return np.ctypeslib.as_array((ctypes.c_int32 * N).from_address(q)), q


(arr, arr_p), (sums, sums_p) = symmetric(), symmetric()
arr[:] = values(me)
barrier_all()
got = np.full(N, -7, dtype=np.int32)
fn(lib, "nvshmem_getmem", None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)(
    got.ctypes.data, arr_p, N * 4, left)
assert np.array_equal(got, values(left)), (got, values(left))
sums[:] = -7
rc = fn(lib, "nvshmem_int_sum_reduce", ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
        ctypes.c_size_t)(0, sums_p, arr_p, N)
assert rc == 0, rc
want = sum(values(pe).astype(np.int64) for pe in range(n))
want = ((want + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)
assert np.array_equal(sums, want), (sums, want)
barrier_all()
free = fn(lib, "nvshmem_free", None, ctypes.c_void_p)
if MODE == "core":
    nv.free_array(sums)
    nv.free_array(arr)
else:
    free(sums_p)
    free(arr_p)
free(p)
print(f"PASS pe {me}/{n}", flush=True)
if MODE == "core":
    nv.finalize()
else:
    fn(lib, "nvshmemx_hostlib_finalize", None)()
