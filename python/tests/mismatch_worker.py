"""One PE of test_core.py's collective-mismatch test (CPU PEs): the members call reduce with different element
counts, and then broadcast with different roots; each call must raise NvshmemError with the library's
GSHMEM_ERROR_MISMATCH status on every PE (not a hang, not wrong data, not a process exit), and a correct reduce
afterwards must work with fresh data."""
import os
import sys

import numpy as np

import gshmem.core as nv

MISMATCH = 4  # GSHMEM_ERROR_MISMATCH
SEED = int(os.environ["GSHMEM_TEST_SEED"])


def expect_mismatch(what, fn, pattern):
    try:
        fn()
    except nv.NvshmemError as e:
        if getattr(e, "status", None) != MISMATCH or pattern not in str(e):
            raise AssertionError(f"seed {SEED}: {what}: wrong error: status {getattr(e, 'status', None)}: {e}")
        return
    raise AssertionError(f"seed {SEED}: {what}: no error raised")


def main():
    nv.init()
    me, n = nv.my_pe(), nv.n_pes()
    w = nv.Teams.TEAM_WORLD
    src, dst = nv.array((8,), dtype="int64"), nv.array((8,), dtype="int64")
    src[...] = me
    count = 4 if me == 0 else 8
    expect_mismatch("reduce", lambda: nv.reduce(w, dst[:count], src[:count], "sum"),
                    "the members of the team did not make the same collective call")
    expect_mismatch("broadcast", lambda: nv.broadcast(w, dst, src, root=0 if me == 0 else 1),
                    "from team index")
    nv.barrier_all()
    rng = np.random.default_rng([SEED, 7])
    values = rng.integers(-1000, 1000, size=(n, 8))
    src[...] = values[me]
    dst[...] = -7777  # poison
    nv.reduce(w, dst, src, "sum")
    assert np.array_equal(np.array(dst), values.sum(axis=0)), f"seed {SEED}: reduce after the mismatch is wrong"
    nv.free_array(dst)
    nv.free_array(src)
    nv.finalize()
    print(f"PASS pe {me}/{n}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
