"""One PE of test_core.py's test_reinit (CPU PEs under gshmemrun): init(), a put check, finalize(), then init()
again in the same process (as pytest fixtures that init/finalize per test, or programs that re-initialise, do) and
the check once more with fresh values, then finalize(). Each cycle's values come from (GSHMEM_TEST_SEED, cycle, PE),
so every PE knows exactly what its left neighbour put."""
import os

import numpy as np

import gshmem.core as nv

SEED = int(os.environ["GSHMEM_TEST_SEED"])


def values(cycle, pe):
    return np.random.default_rng([SEED, cycle, pe]).integers(0, 1 << 62, size=64, dtype=np.int64)


def cycle(k, first=None):
    nv.init()
    me, n = nv.my_pe(), nv.n_pes()
    assert first is None or first == (me, n), f"cycle {k}: PE {me} of {n}, the first cycle was {first}"
    nxt, prv = (me + 1) % n, (me + n - 1) % n
    buf = nv.array((64,), dtype="int64")
    buf[...] = ~values(k, prv)  # poisoned with the complement of what must arrive
    nv.barrier_all()
    nv.put(buf, values(k, me), nxt)
    nv.barrier_all()
    assert np.array_equal(np.array(buf), values(k, prv)), f"PE {me} cycle {k}: wrong values from PE {prv}"
    nv.barrier_all()
    nv.free_array(buf)
    nv.finalize()
    return me, n


first = cycle(1)
cycle(2, first)
print(f"PASS pe {first[0]}/{first[1]} (reinit)", flush=True)
