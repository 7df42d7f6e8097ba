"""One PE of test_core.py's split-team stress case: rounds of team_split_strided (odd / even PEs), a 5-element
int64 reduce on the PE's own new team right after the array library wrote its source, checked exactly, then
team_destroy. Written to chase an intermittent wrong result seen with CuPy on one shared H100 (2026-11-25:
check_teams in worker.py, 1 run in 3; bench/NOTES.md entry 18): the output names the round, what came back and
what was expected. LIB=cupy|torch, ITERS (30); GSHMEM_STREAM_OVERLAP=0 and SYNC_BEFORE=1 (synchronise before the
reduce) narrow it down.
"""
import os
import sys

import numpy as np

import gshmem.core as nv


class Cupy:
    def __init__(self):
        import cupy
        self.cp = cupy

    def new(self):
        return nv.array((5,), dtype="int64")

    def free(self, a):
        nv.free_array(a)

    def put(self, a, values):
        a[...] = self.cp.asarray(values)

    def host(self, a):
        return self.cp.asnumpy(a)

    def sync(self):
        self.cp.cuda.get_current_stream().synchronize()


class Torch:
    def __init__(self):
        import torch
        self.torch = torch

    def new(self):
        return nv.tensor((5,), dtype=self.torch.int64)

    def free(self, a):
        nv.free_tensor(a)

    def put(self, a, values):
        a.copy_(self.torch.from_numpy(values))

    def host(self, a):
        return a.cpu().numpy()

    def sync(self):
        self.torch.cuda.synchronize()


def main():
    lib = os.environ.get("LIB", "cupy")
    iters = int(os.environ.get("ITERS", "30"))
    xp = Cupy() if lib == "cupy" else Torch()
    nv.init()
    me, n = nv.my_pe(), nv.n_pes()
    world = nv.Teams.TEAM_WORLD
    filler = [xp.new() for _ in range(3)]  # heap memory with recognisable contents before the rounds' arrays
    for f in filler:
        xp.put(f, np.full(5, 0x4000000000000000 + me, np.int64))
    bad = 0
    for it in range(iters):
        odd = nv.team_split_strided(world, 1, 2, n // 2, None, 0)
        even = nv.team_split_strided(world, 0, 2, (n + 1) // 2, None, 0)
        mine = odd if me % 2 else even
        src, dst = xp.new(), xp.new()
        want = np.arange(5, dtype=np.int64) + 100 * it + 10 * me  # a team of one: the sum is this PE's source
        xp.put(src, want)
        if os.environ.get("SYNC_BEFORE"):
            xp.sync()
        nv.reduce(mine, dst, src, "sum")
        xp.sync()
        got = xp.host(dst)
        if not np.array_equal(got, want):
            bad += 1
            if bad <= 3:
                print(f"PE {me} round {it}: got {got.tolist()} want {want.tolist()} "
                      f"(src now {xp.host(src).tolist()})", flush=True)
        nv.barrier_all()
        xp.sync()
        xp.free(dst)
        xp.free(src)
        nv.team_destroy(mine)
    print(f"PE {me} {lib} overlap={os.environ.get('GSHMEM_STREAM_OVERLAP', '1')} "
          f"sync_before={bool(os.environ.get('SYNC_BEFORE'))}: {bad} wrong of {iters}", flush=True)
    nv.barrier_all()
    xp.sync()
    nv.finalize()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
