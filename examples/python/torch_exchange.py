"""gshmem.core with torch under torchrun: symmetric tensors, a write into the next PE's tensor through
get_peer_tensor, an allreduce and an alltoall on a CUDA stream, each checked.

    torchrun --nproc-per-node=2 examples/python/torch_exchange.py        # one PE per GPU
    GSHMEM_DEVICE=cpu torchrun --nproc-per-node=4 examples/python/torch_exchange.py   # CPU PEs, CPU tensors

Written against nvshmem4py's names: with `import nvshmem.core as nvshmem` (and its uid init) it is the same
program on NVIDIA's library.
"""
import sys

import torch

import gshmem.core as nvshmem


def main():
    nvshmem.init()  # torchrun's RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT
    me, n = nvshmem.my_pe(), nvshmem.n_pes()
    world = nvshmem.Teams.TEAM_WORLD
    box = nvshmem.tensor((4,), dtype=torch.int32)
    gpu = box.is_cuda
    stream = torch.cuda.current_stream() if gpu else None  # CPU PEs: blocking calls, no stream
    sync = stream.synchronize if gpu else (lambda: None)

    # 1. Write this PE's number into the next PE's box with a plain torch copy through the peer mapping.
    box.fill_(-1)
    nvshmem.barrier_all(stream=stream)
    nvshmem.get_peer_tensor(box, (me + 1) % n).fill_(me)
    nvshmem.barrier_all(stream=stream)
    sync()
    ok = bool((box == (me - 1) % n).all())

    # 2. Allreduce: every PE gets the sum of all PEs' tensors.
    src = nvshmem.tensor((1024,), dtype=torch.float32)
    dst = nvshmem.tensor((1024,), dtype=torch.float32)
    src.copy_(torch.arange(1024, dtype=torch.float32) * (me + 1))
    nvshmem.reduce(world, dst, src, "sum", stream=stream)
    sync()
    ok &= torch.equal(dst.cpu(), torch.arange(1024, dtype=torch.float32) * (n * (n + 1) // 2))

    # 3. Alltoall: block j of my source goes to PE j; block i of my result came from PE i.
    a2a_src = nvshmem.tensor((n, 8), dtype=torch.int64)
    a2a_dst = nvshmem.tensor((n, 8), dtype=torch.int64)
    a2a_src.copy_(torch.arange(n * 8).reshape(n, 8) + 1000 * me)
    nvshmem.alltoall(world, a2a_dst, a2a_src, stream=stream)
    sync()
    want = torch.stack([torch.arange(me * 8, me * 8 + 8) + 1000 * p for p in range(n)])
    ok &= torch.equal(a2a_dst.cpu(), want)

    nvshmem.barrier_all(stream=stream)
    sync()
    for t in (a2a_dst, a2a_src, dst, src, box):
        nvshmem.free_tensor(t)
    nvshmem.finalize()
    print(f"PE {me} of {n} ({'GPU' if gpu else 'CPU'}): peer write, allreduce and alltoall "
          f"{'ok' if ok else 'WRONG'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
