"""gshmem.core from Python: symmetric arrays, a write into the next PE's array through get_peer_array, an
allreduce and an alltoall, each checked. CPU PEs (NumPy arrays on the symmetric heap), no GPU needed:

    pip install . --config-settings=cmake.define.GSHMEM_WITH_CUDA=OFF
    GSHMEM_DEVICE=cpu gshmemrun -n 4 -- python3 examples/python/exchange.py

The same program with `import nvshmem.core as nvshmem` is what nvshmem4py users write (there with CuPy arrays and a
stream on GPUs, which gshmem.core takes too; torch_exchange.py is the torch + torchrun form).
"""
import sys

import numpy as np

import gshmem.core as nvshmem


def main():
    nvshmem.init()
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    world = nvshmem.Teams.TEAM_WORLD
    failures = 0

    # 1. Symmetric arrays; write this PE's number into the next PE's copy through its mapped address.
    box = nvshmem.array((4,), dtype="int32")
    box[:] = -1
    nvshmem.barrier_all()
    peer = nvshmem.get_peer_array(box, (me + 1) % n)
    peer[:] = me
    nvshmem.barrier_all()
    if not np.all(box == (me - 1) % n):
        print(f"PE {me}: peer write: got {box}, want {(me - 1) % n}", file=sys.stderr)
        failures += 1

    # 2. Allreduce: every PE contributes [me, me + 1, ...]; the sum is known in closed form.
    src = nvshmem.array((8,), dtype="float32")
    dst = nvshmem.array((8,), dtype="float32")
    src[:] = me + np.arange(8, dtype=np.float32)
    nvshmem.reduce(world, dst, src, "sum")
    want = n * np.arange(8, dtype=np.float32) + n * (n - 1) / 2
    if not np.array_equal(dst, want):
        print(f"PE {me}: allreduce: got {dst}, want {want}", file=sys.stderr)
        failures += 1

    # 3. Alltoall: block j of PE i's source (value 100 * i + j) lands in block i of PE j.
    a2a_src = nvshmem.array((n * 2,), dtype="int64")
    a2a_dst = nvshmem.array((n * 2,), dtype="int64")
    a2a_src[:] = np.repeat(100 * me + np.arange(n), 2)
    nvshmem.alltoall(world, a2a_dst, a2a_src)
    want = np.repeat(100 * np.arange(n) + me, 2)
    if not np.array_equal(a2a_dst, want):
        print(f"PE {me}: alltoall: got {a2a_dst}, want {want}", file=sys.stderr)
        failures += 1

    nvshmem.barrier_all()
    for a in (box, src, dst, a2a_src, a2a_dst):
        nvshmem.free_array(a)
    nvshmem.finalize()
    print(f"PE {me} of {n}: peer write, allreduce and alltoall {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
